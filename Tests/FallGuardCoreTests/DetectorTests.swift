import FallGuardCore
import Testing
import FallGuardTestSupport

@Suite struct DetectorTests {
    static let all = DetectorCatalog.names

    func detections(_ name: String, _ samples: [AccelerationSample], _ set: [String] = []) throws -> [FallSuspected] {
        var d = try DetectorConfiguration(name: name, assignments: set).makeDetector()
        return detectFalls(in: samples, using: &d)
    }

    @Test(arguments: all)
    func standingStillNeverAlarms(name: String) throws {
        var rng = SplitMix(seed: 7)
        #expect(try detections(name, Synthetic.standing(from: 0, seconds: 600, rng: &rng)).isEmpty)
    }

    @Test(arguments: all)
    func aHardFallIsDetectedOnceAtItsImpact(name: String) throws {
        var rng = SplitMix(seed: 3)
        let (samples, impact) = Synthetic.fall(rng: &rng)
        let found = try detections(name, samples)
        #expect(found.count == 1, "one fall, one event")
        let d = try #require(found.first)
        #expect(d.detector == name)
        #expect(abs(d.impactTime - impact) <= 0.1, "impact at \(d.impactTime), expected \(impact)")
        #expect(d.decisionTime >= d.impactTime && d.decisionTime - impact < 6)
        #expect(d.peak > 3)
        #expect(!d.phases.isEmpty && !d.features.isEmpty && !d.reason.isEmpty)
    }

    @Test func multiphaseExplainsItsDecision() throws {
        var rng = SplitMix(seed: 5)
        let d = try #require(try detections("multiphase", Synthetic.fall(rng: &rng).samples).first)
        #expect(d.phases.contains("strong-impact"), "a 6 g impact is a strong one")
        #expect(d.phases.contains("posture-change"))
        let angle = try #require(d.features.first { $0.name == "posture-change" })
        #expect(angle.unit == "deg" && angle.value > 60 && angle.value < 120, "upright to lying is about 90°")
    }

    @Test func multiphaseIgnoresJoggingThatFoolsTheThresholdRules() throws {
        var rng = SplitMix(seed: 11)
        let jog = Synthetic.gait(from: 0, seconds: 120, cadence: 2.8, amplitude: 3.2, rng: &rng)
        #expect(try detections("multiphase", jog).isEmpty)
        #expect(try !detections("sum-abs", jog).isEmpty, "the thesis rule fires on jogging")
        #expect(try !detections("per-axis", jog).isEmpty, "the Arduino rule fires on jogging")
    }

    @Test func multiphaseIgnoresAnImpactWithoutAPostureChange() throws {
        // Standing, a 5 g jolt (a stamp or a bump), still standing afterwards.
        var rng = SplitMix(seed: 13)
        var s = Synthetic.standing(from: 0, seconds: 5, rng: &rng)
        s.append(AccelerationSample(time: 5, x: 0.5, y: -5, z: 0.5))
        s += Synthetic.standing(from: 5.025, seconds: 10, rng: &rng)
        #expect(try detections("multiphase", s).isEmpty)
        #expect(try detections("sum-abs", s).count == 1)
    }

    @Test func thresholdsAreTunable() throws {
        var rng = SplitMix(seed: 3)
        let samples = Synthetic.fall(peak: 3.5, rng: &rng).samples
        #expect(try detections("sum-abs", samples, ["threshold=4"]).count == 1)   // 3.5 g along three axes sums above 4
        #expect(try detections("sum-abs", samples, ["threshold=8"]).isEmpty)
        #expect(try detections("per-axis", samples, ["threshold-z=3.5"]).isEmpty)
    }

    @Test func refractoryMakesOneEventPerFall() throws {
        var rng = SplitMix(seed: 21)
        var s = Synthetic.fall(rng: &rng).samples
        let shift = s.last!.time + 0.025
        let second = Synthetic.fall(rng: &rng).samples.map { AccelerationSample(time: $0.time + shift, x: $0.x, y: $0.y, z: $0.z) }
        s += second
        for name in Self.all { #expect(try detections(name, s).count == 2, "\(name)") }
        #expect(try detections("sum-abs", s, ["refractory=60"]).count == 1)
    }

    @Test func resetForgetsHistory() throws {
        var rng = SplitMix(seed: 3)
        let samples = Synthetic.fall(rng: &rng).samples
        var d = try DetectorConfiguration().makeDetector()
        #expect(detectFalls(in: samples, using: &d).count == 1)
        d.reset()
        #expect(detectFalls(in: samples, using: &d).count == 1, "after reset the same fall is detected again")
    }

    @Test func settingsAreCheckedByName() {
        #expect(throws: DetectorSettingError.unknownDetector("smart", known: DetectorCatalog.names)) {
            try DetectorConfiguration(name: "smart")
        }
        #expect(throws: DetectorSettingError.self) { try DetectorConfiguration(name: "sum-abs", assignments: ["thresold=3"]) }
        #expect(throws: DetectorSettingError.notANumber(key: "threshold", text: "high")) {
            try DetectorConfiguration(name: "sum-abs", assignments: ["threshold=high"])
        }
        #expect(throws: DetectorSettingError.malformed("threshold")) {
            try DetectorConfiguration(name: "sum-abs", assignments: ["threshold"])
        }
        do {
            _ = try DetectorConfiguration(name: "sum-abs", assignments: ["threshold=0.5"])
            Issue.record("out-of-range value accepted")
        } catch {
            #expect(error.description.contains("threshold") && error.description.contains("outside"))
        }
        let c = try? DetectorConfiguration(name: "sum-abs", assignments: ["threshold=3.5"])
        #expect(c?.settings["threshold"] == 3.5)
        #expect(c?.label == "sum-abs (threshold=3.5)")
    }

    @Test(arguments: all)
    func everyParameterHasADefaultInsideItsRangeAndAUnit(name: String) throws {
        for p in try DetectorCatalog.parameters(for: name) {
            #expect(p.range.contains(p.defaultValue), "\(name).\(p.key)")
            #expect(!p.help.isEmpty)
        }
    }
}
