import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing

/// Issue 35, the bed: the upright a worn device learns while its wearer walks, and the
/// multiphase detector's `lying-before` (an impact softer than moving-impact after the trunk
/// was lying is no fall). Real FallAllD trials, `Fixtures/README.md` (`bed/`).
let bedFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/bed").path

@Suite struct BedTests {
    func samples(_ name: String) throws -> [AccelerationSample] {
        try RecordingFile.read(path: bedFixtures + "/\(name).csv.gz").samples
    }

    /// The upright learned from one walking trial of the same wearer.
    func upright(walking name: String) throws -> (x: Double, y: Double, z: Double) {
        try #require(SubjectUpright.learner(try samples(name)).upright, "no 5 s of walking in \(name)")
    }

    /// The 125 ms mean of |a| at the impact.
    func impact(_ d: FallSuspected) throws -> Double {
        try #require(d.features.first { $0.name == "impact" }, "\(d.reason)").value
    }

    func detections(_ name: String, upright: (x: Double, y: Double, z: Double)?, _ set: [String] = []) throws -> [FallSuspected] {
        var detector = try DetectorConfiguration(name: "multiphase", assignments: set).makeDetector()
        if let upright { detector.learnedUpright(upright) }
        return DetectorRunner.detections(in: try samples(name), by: &detector)
    }

    /// Walking slowly (D20, AD05): the walking recogniser finds steps for most of the 20 s, and
    /// the mean acceleration then is gravity with the trunk upright: FallAllD's waist device
    /// has X vertical when standing (its README), so the learned upright lies near +X.
    @Test func theUprightIsLearnedWhileWalking() throws {
        let walk = try samples("D20_AD05_R02")
        var learner = UprightLearner()
        for s in walk.prefix(80) { learner.process(s) }
        #expect(learner.upright == nil, "no upright before 5 s of walking")
        let u = try upright(walking: "D20_AD05_R02")
        #expect(angleDegrees(u, (1, 0, 0)) < 25, "\(u)")
        // The walking of the other wearer's device agrees too (another trial, another subject).
        #expect(angleDegrees(try upright(walking: "D20_AD07_R01"), (1, 0, 0)) < 25)
        // Lying and turning in bed is no walk: no upright from it.
        #expect(SubjectUpright.learner(try samples("D17_AD05_R04")).count < UprightLearner.minimumSamples)
    }

    /// Turning over while lying (D17): the shipped detector alarms (a fall's turn, 1.48 g and
    /// 1.53 g on the mattress, then lying still); with the wearer's upright learned while walking
    /// the trunk was lying throughout the 3.5 s before: quiet with `lying-before=60`; off by
    /// default (safety first: see MultiphaseDetector), so it alarms as before.
    @Test func turningOverInBedIsQuietOnceTheUprightIsKnown() throws {
        for (turn, walk) in [("D17_AD05_R04", "D20_AD05_R02"), ("D17_AD07_R05", "D20_AD07_R01")] {
            #expect(!(try detections(turn, upright: nil)).isEmpty, "\(turn) alarms without an upright")
            let u = try upright(walking: walk)
            #expect(try detections(turn, upright: u, ["lying-before=60"]).isEmpty, "\(turn) quiet with the upright and lying-before=60")
            #expect(!(try detections(turn, upright: u)).isEmpty, "\(turn): off by default (lying-before 0)")
        }
    }

    /// A fall out of bed (F27, AD07) starts lying too, but lands at 1.80 g (≥ moving-impact,
    /// 1.6 g): still a fall with the upright known. Were the exemption 1.9 g, the rule would
    /// drop it: the trunk was lying before, and only the impact keeps it.
    @Test func aFallOutOfBedIsStillAFall() throws {
        let u = try upright(walking: "D20_AD07_R01")
        let found = try detections("F27_AD07_R01", upright: u, ["lying-before=60"])
        let d = try #require(found.first, "the fall out of bed is found")
        #expect(try impact(d) >= 1.6 && impact(d) < 1.9, "\(d.reason)")
        #expect(try detections("F27_AD07_R01", upright: u, ["lying-before=60", "moving-impact=1.9"]).isEmpty, "lying before, softer than 1.9 g")
        #expect(!(try detections("F27_AD07_R01", upright: nil, ["moving-impact=1.9"])).isEmpty, "without an upright it stays a fall")
    }

    /// A fall that starts upright (F21, AD05: a trip while jogging, 2.70 g) is unchanged by the
    /// upright, even were its impact under the exemption (moving-impact=3.0): the trunk was
    /// upright before the impact, so the rule does not apply.
    @Test func aFallFromUprightIsUnchangedByTheUpright() throws {
        let u = try upright(walking: "D20_AD05_R02")
        let without = try detections("F21_AD05_R01", upright: nil, ["moving-impact=3.0"])
        let with = try detections("F21_AD05_R01", upright: u, ["lying-before=60", "moving-impact=3.0"])
        #expect(!with.isEmpty && with.map(\.impactTime) == without.map(\.impactTime), "\(with.map(\.reason))")
        #expect(try impact(try #require(with.first)) < 3.0, "\(with.map(\.reason))")
    }

    /// `evaluate` gives each trial the upright of its subject's other trials: on these six
    /// trials (two subjects) the two turns in bed are quiet and both falls are found.
    @Test func evaluateLearnsEachSubjectsUprightFromTheirOtherTrials() throws {
        let e = try Evaluator.evaluate(try Dataset.scan(bedFixtures), configuration: DetectorConfiguration(assignments: ["lying-before=60"]), threads: 2)
        let alarmed = Dictionary(uniqueKeysWithValues: e.outcomes.map { ($0.trial.label.code + "_" + $0.trial.label.subject, $0.alarmed || $0.recoveredOnly) })
        #expect(alarmed["D17_AD05"] == false && alarmed["D17_AD07"] == false, "\(alarmed)")
        #expect(alarmed["F27_AD07"] == true && alarmed["F21_AD05"] == true, "\(alarmed)")
        let uprights = SubjectUpright.uprights(subjects: ["A", "A", "B"], learners: [UprightLearner(), UprightLearner(), UprightLearner()])
        #expect(uprights.allSatisfy { $0 == nil }, "no walking, no upright")
    }
}
