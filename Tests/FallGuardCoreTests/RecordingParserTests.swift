import FallGuardCore
import Testing
import FallGuardTestSupport

@Suite struct RecordingParserTests {
    func parse(_ text: String) throws(RecordingFormatError) -> Recording {
        var text = text
        let r = text.withUTF8 { b in
            Result { () throws(RecordingFormatError) -> Recording in try RecordingParser.parse(UnsafeRawBufferPointer(b)) }
        }
        return try r.get()
    }

    func error(_ text: String) -> RecordingFormatError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsUntimedRowsAtFortyHertz() throws {
        let r = try parse("x_g,y_g,z_g\n0.1,-1.0,0.05\n-2.5e-1,+1,3\n")
        #expect(!r.hasTimes)
        #expect(r.samples == [
            AccelerationSample(time: 0, x: 0.1, y: -1.0, z: 0.05),
            AccelerationSample(time: 0.025, x: -0.25, y: 1, z: 3),
        ])
        #expect(abs(r.duration - 0.05) < 1e-12)
    }

    @Test func readsTimedRowsWithCRLFAndBOMAndSpaces() throws {
        let r = try parse("\u{FEFF}t_s,x_g,y_g,z_g\r\n0.000, 1, 2, 3\r\n0.031,4,5,6\r\n\r\n")
        #expect(r.hasTimes)
        #expect(r.samples.map(\.time) == [0, 0.031])
        #expect(r.samples[1].z == 6)
    }

    // Six axes (issue 35): the gyroscope's columns are optional, in degrees per second.

    @Test func readsTheGyroscopesColumnsWhenTheHeaderHasThem() throws {
        let r = try parse("t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps\n0.000,0.1,-1,0.05,-2.99,1.39,-0.35\n0.025,0,0,1,120.5,0,-300\n")
        #expect(r.hasTimes && r.hasGyro)
        #expect(r.samples == [
            AccelerationSample(time: 0, x: 0.1, y: -1, z: 0.05, gyro: AngularVelocity(x: -2.99, y: 1.39, z: -0.35)),
            AccelerationSample(time: 0.025, x: 0, y: 0, z: 1, gyro: AngularVelocity(x: 120.5, y: 0, z: -300)),
        ])
        let untimed = try parse("x_g,y_g,z_g,gx_dps,gy_dps,gz_dps\n0,0,1,1,2,3\n")
        #expect(!untimed.hasTimes && untimed.hasGyro && untimed.samples[0].gyro == AngularVelocity(x: 1, y: 2, z: 3))
        let three = try parse("t_s,x_g,y_g,z_g\n0,0,0,1\n")
        #expect(!three.hasGyro && three.samples[0].gyro == nil, "three-axis files read as before")
    }

    @Test func aSixAxisRowMissingAGyroColumnOrOutOfRangeNamesItsLine() {
        #expect(error("t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps\n0,0,0,1,1,2,3\n0.025,0,0,1,1,2\n")
                == RecordingFormatError(line: 3, reason: "expected 7 numbers (t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps), found 6"))
        #expect(error("t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps\n0,0,0,1,1,x,3\n")
                == RecordingFormatError(line: 2, reason: "'x' in column gy_dps is not a number"))
        #expect(error("t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps\n0,0,0,1,1,20000,3\n")?.reason.contains("beyond any gyroscope's range") == true)
        #expect(error("t_s,x_g,y_g,z_g,gx_dps\n0,0,0,1,1\n")?.reason.contains("either followed by ',gx_dps,gy_dps,gz_dps'") == true)
    }

    @Test func aSixAxisRowIsWrittenWithItsGyroscopeAndReadBack() throws {
        let s = AccelerationSample(time: 1.5, x: 0.25, y: -1, z: 0.0625, gyro: AngularVelocity(x: -2.994, y: 150.5, z: 0))
        #expect(Recording.row(s) == "1.5000,0.2500,-1.0000,0.0625,-2.99,150.50,0.00")
        #expect(Recording.row(s.accelerometerOnly) == "1.5000,0.2500,-1.0000,0.0625")
        #expect(Recording.timedHeader(for: s) == Recording.sixAxisHeader && Recording.timedHeader(for: s.accelerometerOnly) == Recording.timedHeader)
        let back = try parse(Recording.sixAxisHeader + "\n" + Recording.row(s) + "\n").samples[0]
        #expect(back.gyro == AngularVelocity(x: -2.99, y: 150.5, z: 0) && back.x == 0.25)
    }

    @Test func parsesNumbersExactlyAsTheStandardLibrary() throws {
        let values = ["0.035", "-1.004", "1e-3", "12.3456789", "-0.000001", "15.99609375", "7", ".5", "5."]
        let text = "x_g,y_g,z_g\n" + values.map { "\($0),0,0" }.joined(separator: "\n")
        let r = try parse(text)
        for (s, v) in zip(r.samples, values) { #expect(s.x == Double(v), "\(v)") }
        #expect(try parse("t_s,x_g,y_g,z_g\n123456.789,0,0,1\n").samples[0].time == 123456.789)
    }

    @Test func roundTripsItsOwnRows() throws {
        let s = AccelerationSample(time: 12.3456, x: -0.5, y: 1.25, z: 0.0001)
        let r = try parse(Recording.timedHeader + "\n" + Recording.row(s) + "\n")
        #expect(r.samples == [s])
    }

    @Test func namesTheLineAndTheProblem() {
        #expect(error("") == RecordingFormatError(line: 1, reason: "empty file: expected the header 'x_g,y_g,z_g'"))
        #expect(error("a,b,c\n1,2,3\n")?.line == 1)
        #expect(error("x_g,y_g,z_g\n")?.reason == "no samples after the header")
        #expect(error("x_g,y_g,z_g\n1,2,3\n1,abc,3\n") == RecordingFormatError(line: 3, reason: "'abc' in column y_g is not a number"))
        #expect(error("x_g,y_g,z_g\n1,2\n")?.line == 2)
        #expect(error("x_g,y_g,z_g\n1,2\n")?.reason.contains("z_g") == true)
        #expect(error("x_g,y_g,z_g\n1,,3\n")?.reason.contains("column y_g is empty") == true)
        #expect(error("x_g,y_g,z_g\n1,2,3,4\n") == RecordingFormatError(line: 2, reason: "more than 3 columns"))
        #expect(error("x_g,y_g,z_g\n1,2,3\n\n1,nan,3\n") == RecordingFormatError(line: 4, reason: "'nan' in column y_g is not a number"))
        #expect(error("x_g,y_g,z_g\n1,2,1e999\n")?.line == 2)
        #expect(error("t_s,x_g,y_g,z_g\n0,1,2,3\n0,1,2,3\n") == RecordingFormatError(line: 3, reason: "time 0.0 s does not come after 0.0 s"))
    }

    /// Issue 14: a reading no sensor can make, or times that would make a replay allocate
    /// without bound, stop at their line.
    @Test func refusesReadingsAndTimesNoSensorMakes() {
        #expect(error("x_g,y_g,z_g\n0,0,1\n1e17,0,1\n")?.line == 3)
        #expect(error("x_g,y_g,z_g\n0,0,1\n1e17,0,1\n")?.reason.contains("±64 g") == true)
        #expect(error("x_g,y_g,z_g\n0,-64.5,1\n")?.line == 2)
        #expect(error("t_s,x_g,y_g,z_g\n0,0,0,1\n0.000000001,0,0,1\n")?.reason.contains("faster than 10 kHz") == true)
        #expect(error("t_s,x_g,y_g,z_g\n0,0,0,1\n-1,0,0,1\n")?.line == 3)
        #expect(error("t_s,x_g,y_g,z_g\n1e300,0,0,1\n")?.line == 2)
        #expect(error("t_s,x_g,y_g,z_g\n0,64,-64,0\n0.0001,0,0,1\n") == nil)
    }

    /// Issue 14: the formatter of features and rows takes any number (1e17 g trapped `Int(_:)`).
    @Test func formatsAnyNumberWithoutTrapping() {
        #expect(Recording.row(AccelerationSample(time: 1, x: 1e17, y: .nan, z: -.infinity)) == "1.0000,1e+17,nan,-inf")
        let fall = FallSuspected(detector: "test", impactTime: 0, decisionTime: 0, peak: 1e17, phases: ["impact"],
                                 features: [DetectionFeature("impact", 1e17, "g")])
        #expect(fall.reason == "impact (impact=1e+17 g)")
        #expect(Recording.row(AccelerationSample(time: 0.5, x: -0.00004, y: 2, z: -1.5)) == "0.5000,0.0000,2.0000,-1.5000")
    }

    /// fuzz/corpus/recording, the seeds and what fuzzing found (bench/fuzz.sh): each file parses
    /// to finite samples or names a line, and the seeds parse to what they hold.
    @Test func everyFuzzCorpusFileParsesOrNamesALine() throws {
        let corpus = fuzzCorpus("recording")
        for (name, bytes) in corpus {
            let parsed = bytes.withUnsafeBytes { b in
                Result { () throws(RecordingFormatError) -> Recording in try RecordingParser.parse(b) }
            }
            switch parsed {
            case .success(let r):
                #expect(!r.samples.isEmpty && r.samples.allSatisfy { $0.time.isFinite && $0.x.isFinite && $0.y.isFinite && $0.z.isFinite }, "\(name)")
            case .failure(let e):
                #expect(e.line >= 1 && !e.reason.isEmpty, "\(name)")
            }
        }
        func seed(_ name: String) throws -> Recording {
            try parse(String(decoding: try #require(corpus.first { $0.name == name }).bytes, as: UTF8.self))
        }
        #expect(try seed("timed.csv").samples == [
            AccelerationSample(time: 0, x: 0.01, y: -0.98, z: 0.03),
            AccelerationSample(time: 0.025, x: 0.012, y: -0.979, z: 0.031),
            AccelerationSample(time: 0.05, x: 1.5, y: -2.75, z: 0.5),
        ])
        #expect(try seed("bom-crlf.csv").samples == [
            AccelerationSample(time: 0, x: 0.1, y: 0.2, z: 0.3), AccelerationSample(time: 0.025, x: 0.4, y: 0.5, z: 0.6),
        ])
        let untimed = try seed("untimed.csv")
        #expect(!untimed.hasTimes && untimed.samples.count == 40 && untimed.samples[0].x == -0.008)
    }

    @Test func readsTrialLabels() {
        let l = TrialLabel(fileName: "F05_SA01_R04.csv")
        #expect(l?.kind == .fall && l?.code == "F05" && l?.subject == "SA01" && l?.trial == 4)
        #expect(TrialLabel(fileName: "D17_SE10_R01.csv")?.kind == .adl)
        for bad in ["F05_SA01_R04.txt", "X05_SA01_R04.csv", "F05_SA01.csv", "F05_SA01_RX.csv", "F_SA01_R1.csv", "notes.csv"] {
            #expect(TrialLabel(fileName: bad) == nil, "\(bad)")
        }
    }

    /// Issue 15: codes as people write them. Subject and trial are the last two fields; the code
    /// is everything before them, underscores included, F or D followed by letters or digits.
    @Test func readsCodesAsPeopleWriteThem() {
        let f = TrialLabel(fileName: "FforwardFall_S16_R03.csv")
        #expect(f?.kind == .fall && f?.code == "FforwardFall" && f?.subject == "S16" && f?.trial == 3)
        let d = TrialLabel(fileName: "DSitting_GettingUpOnAChair_S01_R01.csv")
        #expect(d?.kind == .adl && d?.code == "DSitting_GettingUpOnAChair" && d?.subject == "S01" && d?.trial == 1)
        #expect(TrialLabel(fileName: "DAplausing_S01_R01.csv")?.code == "DAplausing")
        #expect(TrialLabel(fileName: "F1stairs_home_R12.csv")?.subject == "home")
        #expect(TrialLabel(fileName: "D_a_b_S2_R2.csv") == nil, "the code's first field is F or D followed by something")
        for bad in ["Fall__S01_R01.csv", "FforwardFall_S16_R.csv", "FforwardFall_S-16_R03.csv", "Walk_S01_R01.csv",
                    "FforwardFall__R03.csv", "Fförward_S16_R03.csv", "_FforwardFall_S16_R03.csv", "FforwardFall_S16_R3a.csv"] {
            #expect(TrialLabel(fileName: bad) == nil, "\(bad)")
        }
    }

    @Test func rowsWrittenAsBytesAreTheTextFixedDecimalGives() {
        var values: [Double] = [0, -0, 0.00004, -0.00004, 0.00005, -0.00006, 1, -1, 0.9999, -0.99995, 12.5, 29912.29541]
        values += [1e-9, -1e-9, 123456789.123, 8.9e14, 9.1e15, -9.1e15, Double.infinity, -Double.infinity, Double.nan, Double.pi]
        var seed: UInt64 = 42
        for _ in 0..<2000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let unit = Double(seed >> 11) / Double(UInt64(1) << 53) - 0.5
            var scale = 0.001
            for _ in 0..<Int(seed % 9) { scale *= 10 }
            values.append(unit * scale)
        }
        for v in values {
            for digits in [0, 1, 3, 4, 15] {
                var bytes: [UInt8] = []
                appendFixedDecimal(v, digits: digits, to: &bytes)
                #expect(String(decoding: bytes, as: UTF8.self) == fixedDecimal(v, digits: digits), "\(v) to \(digits)")
            }
        }
        let s = AccelerationSample(time: 12.34567, x: -0.0004, y: 1.23456, z: -16)
        #expect(Recording.row(s) == "12.3457,-0.0004,1.2346,-16.0000")
        #expect(Recording.row(s, valueDigits: 3) == "12.3457,0.000,1.235,-16.000")
    }
}
