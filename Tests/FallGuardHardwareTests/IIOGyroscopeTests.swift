import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// The MPU6050's gyroscope through the real libiio against the emulated inv_mpu6050 driver
/// (issue 35): `anglvel_x/y/z` in the accelerometer's scan, scaled by the driver's own
/// `in_anglvel_scale` (rad/s) into °/s and mounted as the accelerometer, compared count for
/// count with what the emulator wrote. The recording is a real six-axis fall (SisFall F15 with
/// its ITG3200 gyroscope, Tests/FallGuardFieldTestTests/Fixtures/sixaxis).
@Suite(.serialized, .enabled(if: Emulator.available, Emulator.skipReason))
struct IIOGyroscopeTests {
    static let sixAxisFall = repositoryRoot + "/Tests/FallGuardFieldTestTests/Fixtures/sixaxis/F15_SA01_R01.csv"
    /// inv_mpu6050's ±2000 °/s scale (rad/s per count), which the bridge keeps.
    static let gyroScale = 0.001064724
    static let dpsPerCount = gyroScale * 180 / Double.pi
    static let gPerCount = 0.004785 / 9.80665

    struct Written { var accel: [Int]; var gyro: [Int] }

    /// The emulator's `sample` rows: kind,seq,sched_ns,written_ns,mode,x,y,z,ts,info,gx,gy,gz.
    static func written(_ path: String, mode: String) throws -> [Written] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("sample,") && $0.contains(",\(mode),") }
            .map { line in
                let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                return Written(accel: f[5...7].map { Int($0)! }, gyro: f[10...12].map { Int($0)! })
            }
    }

    /// `watch --arrival-log` rows: ns,x,y,z (g),gx,gy,gz (°/s).
    static func arrivals(_ path: String) throws -> [[Double]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: ",").dropFirst().map { Double($0)! } }
    }

    static func mounted(_ m: [[Double]], _ v: [Int], _ k: Double, axial: Bool) -> [Double] {
        let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        let c = v.map { Double($0) * k }
        return m.map { row in (axial && det < 0 ? -1 : 1) * (row[0] * c[0] + row[1] * c[1] + row[2] * c[2]) }
    }

    func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "fg-gyro-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Buffered: every scan the driver put in the buffer arrives once, in order, with its
    /// three angular velocities exactly counts × in_anglvel_scale × 180/π (and the
    /// accelerometer's counts × in_accel_scale / g, from the same scan). With a mount matrix
    /// (a rotation, and a mirroring one) both sensors are mounted alike, the gyroscope as an
    /// axial vector.
    @Test(arguments: ["1, 0, 0; 0, 1, 0; 0, 0, 1", "0, 1, 0; -1, 0, 0; 0, 0, 1", "-1, 0, 0; 0, 1, 0; 0, 0, 1"])
    func bufferedScansCarryTheGyroscopeExactly(matrix: String) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Emulator.run(["--model", "mpu6050", "--recording", Self.sixAxisFall, "--noise-counts", "0",
                                  "--mount-matrix", matrix, "--write-log", dir + "/log.csv"],
                                 // the fall's turn peaks 6.8 s into the recording
                                 [Emulator.fallguard, "watch", "--json", "--duration", "9", "--arrival-log", dir + "/arr.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        let opened = try #require(r.events.first { $0["event"] as? String == "opened" })
        #expect(opened["gyroscope"] as? Bool == true && opened["mode"] as? String == "buffered", "\(opened)")
        let m = matrix.split(separator: ";").map { $0.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces))! } }
        let written = try Self.written(dir + "/log.csv", mode: "buffer")
        let got = try Self.arrivals(dir + "/arr.txt")
        #expect(got.count >= 280, "\(got.count) samples in 9 s at 40 Hz")
        #expect(got.count <= written.count)
        var mismatches = 0, largest = 0.0
        for (w, a) in zip(written, got) {
            guard a.count == 6 else { mismatches += 1; continue }
            let accel = Self.mounted(m, w.accel, Self.gPerCount, axial: false)
            let gyro = Self.mounted(m, w.gyro, Self.dpsPerCount, axial: true)
            for i in 0..<3 {
                if abs(a[i] - accel[i]) > 1e-12 || abs(a[3 + i] - gyro[i]) > 1e-9 { mismatches += 1; break }
            }
            largest = max(largest, abs(gyro[0]), abs(gyro[1]), abs(gyro[2]))
        }
        #expect(mismatches == 0, "\(mismatches) of \(got.count) samples differ from the driver's counts")
        #expect(largest > 100, "the fall turns the trunk: \(largest) °/s at most")
        // The emulator's recording is in the board frame: a reader that mounts right gets it
        // back. The driver samples the recording between its rows (interpolated, so a peak
        // may come out lower), but the turn's axis and sense must be the recording's.
        let rec = try RecordingFile.read(path: Self.sixAxisFall).samples.map { [$0.gyro!.x, $0.gyro!.y, $0.gyro!.z] }
        func peak(_ vs: [[Double]]) -> [Double] { vs.max { $0.map { $0 * $0 }.reduce(0, +) < $1.map { $0 * $0 }.reduce(0, +) }! }
        func dominant(_ v: [Double]) -> Int { (0..<3).max { abs(v[$0]) < abs(v[$1]) }! }
        let (pr, pg) = (peak(rec), peak(got.map { Array($0[3...5]) }))
        let (nr, ng) = (pr.map { $0 * $0 }.reduce(0, +).squareRoot(), pg.map { $0 * $0 }.reduce(0, +).squareRoot())
        #expect(ng > 0.75 * nr && ng < nr + 1, "peak |ω| \(ng) °/s read, \(nr) °/s in the recording")
        #expect(dominant(pg) == dominant(pr) && (pg[dominant(pg)] > 0) == (pr[dominant(pr)] > 0),
                "peak turn \(pg) read, \(pr) in the recording")
    }

    /// Polled (inv_mpu6050 without an interrupt line): the three `in_anglvel_*_raw` files are
    /// read beside the accelerometer's on each tick; every reading is a sample the driver
    /// held, scaled exactly.
    @Test func polledReadsTheAnglvelRawFilesExactly() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Emulator.run(["--model", "mpu6050-direct", "--recording", Self.sixAxisFall, "--noise-counts", "0",
                                  "--write-log", dir + "/log.csv"],
                                 [Emulator.fallguard, "watch", "--json", "--duration", "6", "--arrival-log", dir + "/arr.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        let opened = try #require(r.events.first { $0["event"] as? String == "opened" })
        #expect(opened["gyroscope"] as? Bool == true && opened["mode"] as? String == "polled", "\(opened)")
        let held = Set(try Self.written(dir + "/log.csv", mode: "direct").map(\.gyro))
        let got = try Self.arrivals(dir + "/arr.txt")
        #expect(got.count >= 160)
        // A poll may fall between the emulator's rewrites of two files (a torn triple): rare.
        let unknown = got.filter { a in
            a.count != 6 || !held.contains(a[3...5].map { Int(($0 / Self.dpsPerCount).rounded()) })
                || a[3...5].contains { abs($0 / Self.dpsPerCount - ($0 / Self.dpsPerCount).rounded()) > 1e-6 }
        }
        #expect(unknown.count <= max(2, got.count / 50), "\(unknown.count) of \(got.count) polls are no held sample: \(unknown.prefix(3))")
    }

    /// `devices` names the gyroscope and its scale; the ADXL345 has none.
    @Test(arguments: ["mpu6050", "mpu6050-direct", "adxl345-direct"])
    func devicesSaysWhetherTheSensorHasAGyroscope(model: String) throws {
        let r = try Emulator.run(["--model", model, "--recording", Self.sixAxisFall],
                                 [Emulator.fallguard, "devices", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let d = try #require((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])?.first)
        if model.hasPrefix("mpu6050") {
            let g = try #require(d["gyroscope"] as? [String: Any], "\(d)")
            #expect(g["scale"] as? Double == Self.gyroScale)
            #expect((g["availableScales"] as? [Double])?.count == 4)
            #expect(abs((g["rangeDPS"] as? Double ?? 0) - 1998.9) < 0.1, "\(g)")
        } else {
            #expect(d["gyroscope"] == nil, "\(d)")
        }
        let text = try Emulator.run(["--model", model, "--recording", Self.sixAxisFall], [Emulator.fallguard, "devices"])
        #expect(text.stdout.contains(model.hasPrefix("mpu6050") ? "six axes (accelerometer + gyroscope)" : "three axes (accelerometer only)"),
                "\(text.stdout)")
    }

    /// `record` on the MPU6050 writes the six-axis format, the gyroscope's columns holding
    /// what the driver wrote (to the file's 0.01 °/s); on the ADXL345 the three-axis one.
    @Test(arguments: ["mpu6050", "adxl345-buffered"])
    func recordWritesSixAxesWhereThereIsAGyroscope(model: String) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Emulator.run(["--model", model, "--recording", Self.sixAxisFall, "--noise-counts", "0", "--stop-at-end",
                                  "--write-log", dir + "/log.csv"],
                                 [Emulator.fallguard, "record", "--out", dir + "/rec.csv", "--duration", "8"])
        #expect(r.status == 0, "\(r.stderr)")
        let header = try String(contentsOfFile: dir + "/rec.csv", encoding: .utf8).split(separator: "\n").first.map(String.init)
        let recorded = try RecordingFile.read(path: dir + "/rec.csv")
        #expect(recorded.samples.count > 250)
        guard model == "mpu6050" else {
            #expect(header == Recording.timedHeader && !recorded.hasGyro)
            #expect(r.stderr.contains("three axes (accelerometer only)"), "\(r.stderr)")
            return
        }
        #expect(header == Recording.sixAxisHeader && recorded.hasGyro)
        #expect(r.stderr.contains("six axes (accelerometer + gyroscope)"), "\(r.stderr)")
        let written = try Self.written(dir + "/log.csv", mode: "buffer")
        // The driver goes on writing until the command has exited: the file holds the first
        // samples written, in order (a lost one would shift every later row).
        #expect(recorded.samples.count <= written.count, "\(recorded.samples.count) recorded of \(written.count) written")
        var worst = 0.0
        for (w, s) in zip(written, recorded.samples) {
            let g = try #require(s.gyro)
            for (v, c) in zip([g.x, g.y, g.z], w.gyro) { worst = max(worst, abs(v - Double(c) * Self.dpsPerCount)) }
        }
        #expect(worst <= 0.005 + 1e-9, "largest difference \(worst) °/s")
    }
}
