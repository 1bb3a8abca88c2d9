import FallGuardCore
import Testing
import FallGuardTestSupport

@Suite struct DetectorTests {
    static let all = DetectorCatalog.names

    func detections(_ name: String, _ samples: [AccelerationSample], _ set: [String] = []) throws -> [FallSuspected] {
        var d = try DetectorConfiguration(name: name, assignments: set).makeDetector()
        return DetectorRunner.detections(in: samples, by: &d)
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

    @Test func aHardFallIsDecidedWithinThreeSeconds() throws {
        var rng = SplitMix(seed: 4)
        // A 4.5 g raw peak: its 125 ms mean is about 2.5 g, a hard impact but not a strong one.
        let (samples, impact) = Synthetic.fall(peak: 4.5, rng: &rng)
        let d = try #require(try detections("multiphase", samples).first)
        #expect(d.decisionTime - impact <= 3, "hard falls keep the fast decision: \(d.decisionTime - impact) s")
        #expect(d.phases == ["free-fall", "impact", "posture-change", "stillness"], "\(d.phases)")
    }

    // The long look after a soft impact (issue 15).

    @Test func aSoftSlumpIsDetectedAfterTheLongLook() throws {
        var rng = SplitMix(seed: 31)
        let (samples, impact) = Synthetic.slump(peak: 1.5, tilt: 80, still: 10, rng: &rng)
        #expect(try detections("multiphase", samples, ["impact=1.65", "soft-impact=16"]).isEmpty,
                "the detector before issue 15 misses a 1.5 g slump")
        let found = try detections("multiphase", samples)
        #expect(found.count == 1)
        let d = try #require(found.first)
        #expect(d.phases == ["soft-impact", "posture-change", "stillness", "rotation", "long-look"], "\(d.phases)")
        let delay = d.decisionTime - impact
        #expect(delay >= 5.5 && delay <= 6.5, "decided when the 6 s look ends, not at \(delay) s")
        #expect(abs(d.impactTime - impact) <= 0.15)
        let look = try #require(d.features.first { $0.name == "look-posture-change" })
        #expect(look.value > 70 && look.value < 90, "the slump tilted the trunk by 80°: \(look.value)")
        #expect(d.reason.contains("look-stillness="))
    }

    // The posture thresholds of the look, apart from the rotation a look needs first (a slump
    // that ends 37° tilted cannot have turned 55° in half a second).
    @Test(arguments: [35.0, 40.0, 60.0])
    func aSlumpOfOnlyAFewDegreesMoreThanTheLookPostureIsDetected(tilt: Double) throws {
        var rng = SplitMix(seed: 33)
        let samples = Synthetic.slump(peak: 1.45, tilt: tilt + 2, still: 8, rng: &rng).samples
        #expect(try detections("multiphase", samples, ["look-rotation=0"]).count == 1, "tilt \(tilt + 2)°")
        #expect(try detections("multiphase", samples, ["look-rotation=0", "look-posture-change=\(tilt + 5)", "calm-posture-change=\(tilt + 5)"]).isEmpty)
    }

    @Test func afterACalmStartAThirtyTwoDegreeSlumpIsEnough() throws {
        var rng = SplitMix(seed: 45)
        let free = ["look-rotation=0"]
        // Sitting quietly, then slumping forward by only 32°: less than look-posture-change (35°).
        let calm = Synthetic.slump(peak: 1.5, tilt: 32, still: 8, rng: &rng).samples
        let d = try #require(try detections("multiphase", calm, free).first)
        #expect(d.phases == ["soft-impact", "posture-change", "stillness", "calm-start", "rotation", "long-look"], "\(d.phases)")
        #expect(try detections("multiphase", calm, free + ["calm-activity=0"]).isEmpty, "without the calm start 32° is too little")
        // The same slump after fidgeting (std |a| well above 0.1 g before it) needs the full 35°.
        let busy = Synthetic.slump(peak: 1.5, tilt: 32, still: 8, fidget: 0.3, rng: &rng).samples
        #expect(try detections("multiphase", busy, free).isEmpty)
        let busier = Synthetic.slump(peak: 1.5, tilt: 38, still: 8, fidget: 0.3, rng: &rng).samples
        #expect(try detections("multiphase", busier, free).first?.phases.contains("calm-start") == false)
    }

    // The rotation a look needs (issue 26): sitting or lying down on purpose lowers the trunk
    // under control; a fall topples it.

    @Test func sittingDownOnPurposeOpensNoLookThoughItsPostureAndStillnessWouldPass() throws {
        var rng = SplitMix(seed: 47)
        // A 1.5 g landing, the trunk 80° back (onto a bed), turned over 1.5 s, then still for 10 s.
        let sit = Synthetic.slump(peak: 1.5, tilt: 80, still: 10, turn: 1.5, rng: &rng).samples
        // The synthetic turn holds |a| at 0.85 g for 1.5 s: by physics a descent of about 0.6 m,
        // which the wall slide (no gyroscope here) measures as one (0.62 m, 59° back). This test is
        // about the look's rotation gate: the wall slide is off. It also starts from sitting still
        // and ends 59° back, which the slow turn after a calm start takes for a fall
        // (`aCalmLieBackThatEndsHalfLyingIsASlowFallAfterACalmStart`): that rule is off here too.
        let quiet = try detections("multiphase", sit, ["wall-slide=0", "calm-slow-posture-change=65"])
        #expect(quiet.isEmpty, "\(quiet.map(\.reason))")
        #expect(try detections("multiphase", sit, ["look-rotation=0"]).count == 1, "the detector before issue 26 raised it")
        // The same posture reached by toppling in half a second is a fall.
        let fall = try #require(try detections("multiphase", Synthetic.slump(peak: 1.5, tilt: 80, still: 10, rng: &rng).samples).first)
        let turn = try #require(fall.features.first { $0.name == "rotation" })
        // 250 ms means half a second apart see about three quarters of a turn made in 0.5 s.
        #expect(turn.value >= 55 && turn.value <= 80, "turned 80° in half a second: \(turn.value)")
        #expect(fall.phases.contains("rotation"))
    }

    /// The cost of the slow turn after a calm start (issue 35, the older faller's slump out of a
    /// chair that ends half lying): the same synthetic lie-back from sitting still, 59° back after
    /// a turn of 53° in a second, is a fall. No recording in the dev folders does this (HAPT's 30
    /// sit-to-lie, SisFall's D12/D13, FallAllD's D16 stay as they were); a recliner or a sofa may.
    @Test func aCalmLieBackThatEndsHalfLyingIsASlowFallAfterACalmStart() throws {
        var rng = SplitMix(seed: 47)
        let sit = Synthetic.slump(peak: 1.5, tilt: 80, still: 10, turn: 1.5, rng: &rng).samples
        let d = try #require(try detections("multiphase", sit, ["wall-slide=0"]).first)
        #expect(d.phases.contains("slow-rotation") && d.phases.contains("calm-start"), "\(d.reason)")
        let angle = try #require(d.features.first { $0.name == "posture-change" }).value
        #expect(angle >= 55 && angle < 65, "\(d.reason)")
        #expect(try detections("multiphase", sit, ["wall-slide=0", "calm-activity=0"]).isEmpty, "not after a busy start")
    }

    @Test func theRotationGateIsItsSetting() throws {
        var rng = SplitMix(seed: 49)
        let samples = Synthetic.slump(peak: 1.5, tilt: 70, still: 10, turn: 0.8, rng: &rng).samples
        let turned = try #require(try detections("multiphase", samples, ["look-rotation=0"]).first?.features.first { $0.name == "rotation" }).value
        #expect(turned > 35 && turned < 55, "70° over 0.8 s is about 44° in half a second: \(turned)")
        // Without the slow turn (issue 35), which a 70° tilt in 0.8 s also passes.
        #expect(try detections("multiphase", samples, ["look-rotation=\(turned - 1)", "slow-rotation=180"]).count == 1)
        #expect(try detections("multiphase", samples, ["look-rotation=\(turned + 1)", "slow-rotation=180"]).isEmpty)
        #expect(try detections("multiphase", samples, ["look-rotation=\(turned + 1)"]).first?.phases.contains("slow-rotation") == true)
    }

    @Test func aSoftImpactFollowedByGettingUpIsNotAFall() throws {
        var rng = SplitMix(seed: 35)
        // Sitting down hard on a low chair and leaning forward, then getting up 3 s later.
        let samples = Synthetic.slump(peak: 1.5, tilt: 80, still: 4, moving: 5, rng: &rng).samples
        #expect(try detections("multiphase", samples).isEmpty)
        #expect(try detections("multiphase", samples, ["look=3.5"]).count == 1, "a 3.5 s look would have fired")
    }

    @Test func aSoftImpactBelowTheSoftThresholdOpensNoLook() throws {
        var rng = SplitMix(seed: 37)
        let samples = Synthetic.slump(peak: 1.3, tilt: 80, still: 10, rng: &rng).samples
        #expect(try detections("multiphase", samples).isEmpty)
        #expect(try detections("multiphase", samples, ["soft-impact=1.25"]).count == 1)
    }

    @Test func theLongLookDoesNotDependOnTheMounting() throws {
        var rng = SplitMix(seed: 39)
        let (samples, _) = Synthetic.slump(peak: 1.5, tilt: 70, still: 9, rng: &rng)
        let upright = try detections("multiphase", samples)
        #expect(upright.count == 1)
        for (axis, deg) in [((1.0, 0.0, 0.0), 90.0), ((0.3, 0.8, -0.5), 137.0), ((0.0, 0.0, 1.0), 180.0)] {
            let r = try detections("multiphase", Synthetic.rotated(samples, axis: axis, degrees: deg))
            #expect(r.count == 1)
            #expect(abs((r.first?.decisionTime ?? 0) - (upright.first?.decisionTime ?? 1)) < 1e-9)
        }
    }

    @Test func aRecordingThatEndsDuringTheLookLeavesTheDecisionOpen() throws {
        var rng = SplitMix(seed: 41)
        let (samples, impact) = Synthetic.slump(peak: 1.5, tilt: 80, still: 3, rng: &rng)   // ends 3.1 s after
        var d = try DetectorConfiguration().makeDetector()
        #expect(DetectorRunner.detections(in: samples, by: &d).isEmpty)
        let open = try #require(d.openDecision)
        #expect(open.rule == "long-look")
        #expect(abs(open.impactTime - impact) <= 0.15)
        #expect(open.dueTime > samples.last!.time && abs(open.dueTime - impact - 6) < 0.2, "due \(open.dueTime)")
        // Fed the rest of the stillness, the same detector decides.
        let rest = Synthetic.slump(peak: 1.5, tilt: 80, still: 10, rng: &rng).samples.filter { $0.time > samples.last!.time + 1e-9 }
        #expect(DetectorRunner.detections(in: rest, by: &d).count == 1)
        #expect(d.openDecision == nil)
    }

    @Test func aRecordingThatEndsBeforeTheFastDecisionLeavesItOpen() throws {
        var rng = SplitMix(seed: 43)
        let (all, impact) = Synthetic.fall(peak: 4, lying: 10, rng: &rng)
        let cut = Array(all.prefix { $0.time < impact + 1.5 })
        var d = try DetectorConfiguration().makeDetector()
        #expect(DetectorRunner.detections(in: cut, by: &d).isEmpty)
        let open = try #require(d.openDecision)
        #expect(open.rule == "fast" && abs(open.dueTime - impact - 2.5) < 0.2)
        // Standing still has nothing open; nor has a recording whose impact was already judged.
        var quiet = try DetectorConfiguration().makeDetector()
        _ = DetectorRunner.detections(in: Synthetic.standing(from: 0, seconds: 20, rng: &rng), by: &quiet)
        #expect(quiet.openDecision == nil)
        var judged = try DetectorConfiguration().makeDetector()
        #expect(DetectorRunner.detections(in: all, by: &judged).count == 1)
        #expect(judged.openDecision == nil)
        // A peak less than 1 s old is not yet known to be a peak: nothing is due.
        var early = try DetectorConfiguration().makeDetector()
        _ = DetectorRunner.detections(in: Array(all.prefix { $0.time < impact + 0.5 }), by: &early)
        #expect(early.openDecision == nil)
        var sumAbs = try DetectorConfiguration(name: "sum-abs").makeDetector()
        _ = DetectorRunner.detections(in: cut, by: &sumAbs)
        #expect(sumAbs.openDecision == nil, "threshold rules decide at once")
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
        #expect(DetectorRunner.detections(in: samples, by: &d).count == 1)
        d.reset()
        #expect(DetectorRunner.detections(in: samples, by: &d).count == 1, "after reset the same fall is detected again")
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
