import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// Six-axis recordings (issue 35), `Fixtures/sixaxis/README.md`: real clips with the gyroscope.
let sixAxisFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/sixaxis").path

@Suite struct SixAxisTests {
    func detections(_ file: String, _ name: String, _ set: [String] = [], accelerometerOnly: Bool = false) throws -> [FallSuspected] {
        var configuration = try DetectorConfiguration(name: name, assignments: set)
        configuration.accelerometerOnly = accelerometerOnly
        return DetectorRunner.detections(in: try RecordingFile.read(path: sixAxisFixtures + "/" + file).samples,
                                         configuration: configuration)
    }

    func feature(_ d: FallSuspected, _ name: String) throws -> Double {
        try #require(d.features.first { $0.name == name }, "\(d.reason)").value
    }

    /// SisFall SA01 F15 R01 (sisfall-6axis-40hz-dev): a young subject falls sideways out of a
    /// chair; a 2.0 g impact, the trunk ends 73° from sitting. The accelerometer's mean vectors
    /// show a turn of only 49° in half a second (the multiphase detector's one dev fall lost to
    /// its 55° gate, issue 26); the gyroscope measures 84° in a second at up to 241 °/s.
    @Test func aSlowFallFromSittingIsFoundByTheGyroscopesRotation() throws {
        let rec = try RecordingFile.read(path: sixAxisFixtures + "/F15_SA01_R01.csv")
        #expect(rec.hasGyro && rec.samples.allSatisfy { $0.gyro != nil })
        // Before issue 35's slow turn (slow-rotation=180) the accelerometer alone missed it; the
        // slow turn (75° in a second, ending 73° from sitting) finds it now (RecoveredFallTests).
        #expect(try detections("F15_SA01_R01.csv", "multiphase", ["slow-rotation=180"], accelerometerOnly: true).isEmpty,
                "the accelerometer-only detector missed it")
        // The shipped detector reads the gyroscope beside the accelerometer: found without the slow turn.
        let shipped = try detections("F15_SA01_R01.csv", "multiphase", ["slow-rotation=180"])
        #expect(shipped.count == 1 && (try? feature(shipped[0], "peak-angular-velocity")) ?? 0 >= 200, "\(shipped.map(\.reason))")
        #expect(try detections("F15_SA01_R01.csv", "sixaxis", ["slow-rotation=180"], accelerometerOnly: true).isEmpty,
                "without its gyroscope the sixaxis detector is the multiphase detector")
        let found = try detections("F15_SA01_R01.csv", "sixaxis")
        let d = try #require(found.first)
        #expect(found.count == 1 && d.detector == "sixaxis")
        #expect(d.phases.contains("long-look") && d.phases.contains("rotation"), "\(d.reason)")
        #expect(try feature(d, "gyro-rotation") >= 50 && feature(d, "gyro-rotation") < 120)
        #expect(try feature(d, "peak-angular-velocity") >= 200, "\(d.reason)")
        #expect(try feature(d, "rotation") < 55, "the accelerometer's turn stays under its gate: \(d.reason)")
        #expect(abs(d.impactTime - 6.9) < 0.3 && d.decisionTime - d.impactTime <= 15, "\(d.impactTime) \(d.decisionTime)")
    }

    /// FallAllD AD02 F13 R02 (fallalld-waist-6axis-40hz-dev): a syncope while walking, falling
    /// to the side. The 1.64 g impact is soft and the accelerometer's mean vectors show a turn of
    /// only 18° in half a second (the impact blurs it), so the accelerometer alone never opens
    /// the look; the gyroscope measures 46° in a second at up to 213 °/s, the wearer then lies
    /// still 80° from upright: the shipped detector finds it, on its gyroscope. (The accelerometer
    /// alone finds it since the moving rule's turn after the impact: the trunk turns on after the
    /// first contact; that rule is off here.)
    @Test func aFaintWhileWalkingIsFoundByTheShippedDetectorsGyroscope() throws {
        let file = "F13_AD02_R02.csv.gz"
        #expect(try detections(file, "multiphase", ["moving-rotation-after=0"], accelerometerOnly: true).isEmpty,
                "the accelerometer's turn around the impact misses it")
        #expect(try detections(file, "multiphase", accelerometerOnly: true).first?.phases.contains("rotation-after") == true)
        let found = try detections(file, "multiphase")
        let d = try #require(found.first)
        #expect(found.count == 1 && d.phases.contains("long-look"), "\(d.reason)")
        #expect(try feature(d, "rotation") < 55, "the accelerometer's turn stays under its gate: \(d.reason)")
        #expect(try feature(d, "gyro-rotation") >= 40 && feature(d, "peak-angular-velocity") >= 200, "\(d.reason)")
        #expect(abs(d.impactTime - 9.43) < 0.3 && d.decisionTime - d.impactTime <= 15)
        #expect(try detections(file, "multiphase", ["gyro-rotation=50", "moving-rotation-after=0"]).isEmpty,
                "the 40° gate (chosen by FallAllD's held-out folds) is what finds it")
    }

    func falseAlarms(_ name: String, _ detector: String, _ set: [String] = []) throws -> [FallSuspected] {
        let path = sixAxisFixtures + "/" + name + ".csv"
        let outcome = EventEvaluator.outcome(path: path, recording: try RecordingFile.read(path: path),
                                             labels: try LabelsFile.read(path: LabelsFile.sidecar(of: path)),
                                             configuration: try DetectorConfiguration(name: detector, assignments: set))
        return (outcome.falseAlarms + outcome.recoveredReports).sorted { $0.impactTime < $1.impactTime }
    }

    /// HAPT U10 exp2 8-56 s (hapt-6axis-dev-50hz; the clip of `Fixtures/daily` with its
    /// gyroscope): sitting down from standing, a 1.44 g landing, the trunk 47° back and still.
    /// It turned 49° in its fastest second at up to 196 °/s: lowered, not toppled.
    @Test func sittingDownIsNoFall() throws {
        let open = try falseAlarms("U10-exp2-8-56s", "sixaxis", ["gyro-rotation=0", "gyro-peak=0"])
        #expect(open.count == 1 && abs((open.first?.impactTime ?? 0) - 26.4) < 0.3, "without the gate: \(open.map(\.reason))")
        let peak = try feature(try #require(open.first), "peak-angular-velocity")
        #expect(peak > 150 && peak < 200, "\(peak)")
        #expect(try falseAlarms("U10-exp2-8-56s", "sixaxis").isEmpty)
    }

    /// HAPT U11 exp2 55-100 s: lying down from standing (stand-to-lie 70.9-74.0 s), then lying
    /// still: 75° in a second but never faster than 110 °/s.
    @Test func lyingDownOnPurposeIsNoFall() throws {
        let open = try falseAlarms("U11-exp2-55-100s", "sixaxis", ["gyro-rotation=0", "gyro-peak=0"])
        #expect(open.count == 1, "without the gate: \(open.map(\.reason))")
        #expect(try feature(try #require(open.first), "peak-angular-velocity") < 150)
        #expect(try falseAlarms("U11-exp2-55-100s", "sixaxis").isEmpty)
    }

    /// The shipped detector reads the gyroscope beside the accelerometer: sitting down and lying
    /// down on purpose (the two HAPT clips above, with their gyroscope) stay quiet, and the
    /// gyroscope alone would have opened neither look either.
    @Test(arguments: ["U10-exp2-8-56s", "U11-exp2-55-100s"])
    func theShippedDetectorWithItsGyroscopeStaysQuietSittingAndLyingDown(clip: String) throws {
        #expect(try falseAlarms(clip, "multiphase").isEmpty)
        #expect(try falseAlarms(clip, "multiphase", ["gyro-rotation=0", "gyro-peak=0"]).count == 1,
                "without the gyroscope's gate the look opens: the clip tests the gate")
    }

    /// On three-axis recordings the sixaxis detector decides exactly as the multiphase detector.
    @Test func withoutAGyroscopeItIsTheMultiphaseDetector() throws {
        let dataset = try Dataset.scan(fixtures)
        var fired = 0
        for trial in dataset.trials {
            let samples = try RecordingFile.read(path: trial.path).samples
            #expect(samples.allSatisfy { $0.gyro == nil })
            let a = DetectorRunner.detections(in: samples, configuration: try DetectorConfiguration(name: "multiphase"))
            let b = DetectorRunner.detections(in: samples, configuration: try DetectorConfiguration(name: "sixaxis"))
            #expect(a.map(\.impactTime) == b.map(\.impactTime) && a.map(\.phases) == b.map(\.phases), "\(trial.path)")
            #expect(b.allSatisfy { $0.detector == "sixaxis" && !$0.features.contains { $0.name == "peak-angular-velocity" } })
            fired += b.count
        }
        #expect(fired >= 6, "the fixture folder's falls are found: \(fired)")
    }

    /// The hourly recording keeps the gyroscope's columns, and a change of sensor starts a new file.
    @Test func recordingsKeepTheGyroscopeWhenTheSamplesHaveOne() throws {
        let dir = TempDirectory("sixaxis-recordings")
        let folder = dir.path + "/rec"
        let writer = RecordingWriter(directory: folder, keepBytes: 1 << 30)
        let wall = 1_795_478_400.0
        func sample(_ i: Int) -> AccelerationSample {
            AccelerationSample(time: 100 + Double(i) / 40, x: 0, y: -1, z: Double(i % 5) / 100,
                               gyro: AngularVelocity(x: Double(i) * 1.25, y: -3.5, z: 0.01))
        }
        for i in 0..<80 { try writer.append(sample(i), wallTime: wall + Double(i) / 40) }
        for i in 80..<120 { try writer.append(sample(i).accelerometerOnly, wallTime: wall + Double(i) / 40) }
        try writer.close()
        let files = RecordingWriter.files(in: folder).map(\.path)
        #expect(files.count == 2, "\(files)")
        let six = try RecordingFile.read(path: files[0]), three = try RecordingFile.read(path: files[1])
        #expect(six.hasGyro && six.samples.count == 80 && !three.hasGyro && three.samples.count == 40)
        for (i, s) in six.samples.enumerated() {
            let g = try #require(s.gyro)
            #expect(abs(g.x - Double(i) * 1.25) < 0.006 && g.y == -3.5 && g.z == 0.01)
        }
        let text = try runCommand("/bin/gzip", ["-dc", files[0]]).stdout
        #expect(text.hasPrefix(Recording.sixAxisHeader + "\n# wall-clock "), "\(text.prefix(80))")
    }
    /// FallAllD AD07 F21 R02 (fallalld-waist-6axis-40hz-dev): a forward trip while jogging. The
    /// first contact (a 2.5 g impact after a 0.34 g descent) is followed by 1.5 s of rolling on
    /// the mattress: at +1-2.5 s the trunk is only 10° from upright and std |a| is 0.75 g, so the
    /// fast rule and the long look both fail, and the moving rule's turn gate too. From +3.5 s the
    /// trunk lies 83° from upright, still (std |a| ≤ 0.01 g): the late look (issue 35) finds it,
    /// with the gyroscope and without.
    @Test func aJoggersTripThatRollsOnBeforeLyingStillIsALateFall() throws {
        let file = "F21_AD07_R02.csv.gz"
        for accelerometerOnly in [false, true] {
            #expect(try detections(file, "multiphase", ["late-down=0"], accelerometerOnly: accelerometerOnly).isEmpty,
                    "without the late look it is missed")
            let found = try detections(file, "multiphase", accelerometerOnly: accelerometerOnly)
            let d = try #require(found.first)
            #expect(found.count == 1 && d.phases.contains("late-down") && d.phases.contains("long-look"), "\(d.reason)")
            #expect(try feature(d, "late-down") >= 2 && feature(d, "impact") >= 2.0 && feature(d, "free-fall-min") <= 0.85, "\(d.reason)")
            #expect(abs(d.impactTime - 6.5) < 0.3 && d.decisionTime - d.impactTime <= 6.5, "\(d.impactTime) \(d.decisionTime)")
        }
        // Asking for more time down than the look has left misses it again.
        #expect(try detections(file, "multiphase", ["late-down=4"]).isEmpty)
    }

    /// FallAllD AD02 F26 R01 (fallalld-waist-6axis-40hz-dev): a rotational slip while jogging,
    /// with recovery. The 2.11 g impact at 7.2 s (after a 0.34 g descent) leaves the trunk only
    /// 14° from upright at +1-2.5 s; it is down (69-93°) and still from +3 s, and a later soft
    /// peak (10.1 s, 1.57 g) opens a look of its own that fails when the wearer gets up. The late
    /// look keeps its own slot, so that later look does not end it.
    @Test func aLateLookOutlivesALaterCandidatesLook() throws {
        let file = "F26_AD02_R01.csv.gz"
        for accelerometerOnly in [false, true] {
            let found = try detections(file, "multiphase", accelerometerOnly: accelerometerOnly)
            let d = try #require(found.first)
            #expect(found.count == 1 && d.phases.contains("late-down"), "\(d.reason)")
            #expect(abs(d.impactTime - 7.2) < 0.3, "\(d.impactTime)")
            #expect(try detections(file, "multiphase", ["late-down=0"], accelerometerOnly: accelerometerOnly).isEmpty)
        }
    }

    /// FallAllD AD07 D23 R01 (fallalld-waist-6axis-40hz-dev), the same person stumbling: two
    /// hard impacts (2.44 and 2.46 g) after descents (0.30 and 0.23 g) open late looks, but the
    /// trunk stays within 12° of upright: no fall, with the gyroscope and without.
    @Test func aStumbleThatStaysUprightIsNoLateFall() throws {
        for accelerometerOnly in [false, true] {
            #expect(try detections("D23_AD07_R01.csv.gz", "multiphase", accelerometerOnly: accelerometerOnly).isEmpty)
            // Not a near miss: even with `down` lowered to 20° the trunk never tilts that far.
            #expect(try detections("D23_AD07_R01.csv.gz", "multiphase", ["moving-tilt=20"], accelerometerOnly: accelerometerOnly).isEmpty)
        }
    }
}
