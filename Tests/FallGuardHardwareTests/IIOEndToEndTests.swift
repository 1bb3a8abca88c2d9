import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// The real libiio against the emulated ADXL345 and MPU6050 drivers.
/// Real time and serialized: a loaded 2-core machine must not starve the emulators.
@Suite(.serialized, .enabled(if: Emulator.available, Emulator.skipReason))
struct IIOEndToEndTests {
    static let models = ["adxl345-direct", "adxl345-buffered", "mpu6050", "mpu6050-direct"]

    @Test(arguments: models)
    func devicesShowsTheEmulatedDriverAsOnAPi(model: String) throws {
        let r = try Emulator.run(["--model", model, "--recording", Emulator.fixtures + "/D01_SA08_R01.csv"],
                                 [Emulator.fallguard, "devices", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let d = try #require(list.first)
        #expect(d["name"] as? String == (model.hasPrefix("mpu6050") ? "mpu6050" : "adxl345"))
        #expect(d["mode"] as? String == (model.hasSuffix("-direct") ? "polled" : "buffered"))
        if model == "mpu6050" {
            #expect(d["trigger"] as? String == "mpu6050-dev0")
            #expect(d["hasTimestamp"] as? Bool == true)
        } else if model == "mpu6050-direct" {
            #expect(d["trigger"] == nil && d["hasTimestamp"] as? Bool == false, "no interrupt: no trigger, no buffer")
        } else {
            #expect(d["scale"] as? Double == 0.0383)
        }
    }

    /// MPU6050 at exactly 40 Hz, buffered, big-endian scan elements: every sample the emulated
    /// driver put in the buffer is recorded with the value written (within the CSV's rounding),
    /// none lost, duplicated or reordered.
    @Test func mpu6050RecordingHoldsExactlyWhatTheDriverWrote() throws {
        let source = Emulator.fixtures + "/F05_SA03_R02.csv"
        let dir = NSTemporaryDirectory() + "fg-record-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Emulator.run(["--model", "mpu6050", "--recording", source, "--noise-counts", "0", "--stop-at-end",
                                  "--write-log", dir + "/written.csv"],
                                 [Emulator.fallguard, "record", "--out", dir + "/recorded.csv", "--duration", "17"])
        #expect(r.status == 0, "\(r.stderr)")
        // The emulator's log: kind,seq,sched_ns,written_ns,mode,x,y,z,ts,info,gx,gy,gz (raw counts).
        let gPerCount = 0.004785 / 9.80665   // ±16 g, which the bridge selects
        let written = try String(contentsOfFile: dir + "/written.csv", encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("sample,") && $0.contains(",buffer,") }
            .map { line -> (Double, Double, Double) in
                let f = line.split(separator: ",", omittingEmptySubsequences: false)
                return (Double(f[5])! * gPerCount, Double(f[6])! * gPerCount, Double(f[7])! * gPerCount)
            }
        let recorded = try RecordingFile.read(path: dir + "/recorded.csv").samples
        #expect(written.count > 500)
        #expect(recorded.count == written.count, "\(recorded.count) recorded of \(written.count) written")
        var worst = 0.0
        for (w, s) in zip(written, recorded) { worst = max(worst, abs(w.0 - s.x), abs(w.1 - s.y), abs(w.2 - s.z)) }
        #expect(worst <= 0.00006, "largest difference \(worst) g")
        for (a, b) in zip(recorded, recorded.dropFirst()) { #expect(abs(b.time - a.time - 0.025) < 0.002) }
    }

    /// The emulator's writer stands for the driver's interrupt handler and runs on `--irq-cpu`
    /// (only that thread: the command keeps every CPU); `watch` puts its sensor
    /// thread (which both waits in the driver's buffer and consumes) on CPU 0 by default, and on
    /// `--cpu N` when told.
    @Test func theWriterRunsOnTheInterruptCPUAndTheSensorThreadsOnTheirs() throws {
        let last = SensorCPU.online - 1
        // Each task's Cpus_allowed_list: the emulator's (the command's parent), the shell's, watch's.
        let script = #"""
            list() { for t in /proc/$1/task/*; do sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $t/status; done | sort | tr '\n' ' '; }
            "$0" watch --json --duration 2.5 $1 >/dev/null & w=$!
            sleep 1.5
            echo "emulator: $(list $PPID)"; echo "command: $(list $$)"; echo "watch: $(list $w)"
            wait $w
            """#
        func lines(_ irqCPU: String, _ watchArguments: String) throws -> [String: [String]] {
            let r = try Emulator.run(["--model", "mpu6050", "--recording", Emulator.fixtures + "/D01_SA08_R01.csv", "--irq-cpu", irqCPU],
                                     ["/bin/sh", "-c", script, Emulator.fallguard, watchArguments])
            #expect(r.status == 0, "\(r.stderr)")
            var out: [String: [String]] = [:]
            for line in r.stdout.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2 { out[String(parts[0])] = parts[1].split(separator: " ").map(String.init) }
            }
            return out
        }
        let everyCPU = SensorCPU.online > 1 ? "0-\(last)" : "0"
        let pinned = try lines(String(last), "")
        #expect(pinned["emulator"]?.filter { $0 == String(last) }.count == 1, "one emulator thread on CPU \(last): \(pinned)")
        #expect(pinned["emulator"]?.contains(everyCPU) == true, "its other threads are free: \(pinned)")
        #expect(pinned["command"] == [everyCPU], "\(pinned)")
        #expect((pinned["watch"]?.filter { $0 == "0" }.count ?? 0) >= 1, "the sensor thread (capture and consumer) on CPU 0: \(pinned)")
        let moved = try lines("any", "--cpu \(last)")
        #expect(moved["emulator"]?.allSatisfy { $0 == everyCPU } == true, "\(moved)")
        #expect((moved["watch"]?.filter { $0 == String(last) }.count ?? 0) >= 1, "\(moved)")
    }

    /// What `../shared/hardware-notes.md` measured on the real drivers, as the bridge meets it
    /// in the emulator: the ADXL345 rounds 40 Hz down to 25 Hz, so the bridge asks for 50 Hz
    /// (the nearest listed rate above) and resamples; it never needs its one scale changed (a
    /// write is refused with EINVAL). The MPU6050 takes 40 Hz exactly, is switched from its
    /// ±2 g start to ±16 g and its timestamps from realtime to monotonic.
    @Test(arguments: ["adxl345-direct", "mpu6050", "mpu6050-direct"])
    func theBridgeSetsTheDriverAsTheRealOneAnswers(model: String) throws {
        let dir = NSTemporaryDirectory() + "fg-drv-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Emulator.run(["--model", model, "--recording", Emulator.fixtures + "/D01_SA08_R01.csv",
                                  "--write-log", dir + "/log.csv"],
                                 [Emulator.fallguard, "watch", "--json", "--duration", "3"])
        #expect(r.status == 0, "\(r.stderr)")
        let opened = try #require(r.events.first { $0["event"] as? String == "opened" })
        let writes = try String(contentsOfFile: dir + "/log.csv", encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("event,") && $0.contains(",write ") }
            .map { String($0.split(separator: ",", omittingEmptySubsequences: false)[9]) }   // info
        if model.hasPrefix("mpu6050") {
            #expect(opened["rate"] as? Double == 40)
            #expect(opened["mode"] as? String == (model == "mpu6050" ? "buffered" : "polled"))
            #expect(writes.contains("write sampling_frequency='40' ok"), "\(writes)")
            #expect(writes.contains("write in_accel_scale='0.004785' ok"), "±16 g: \(writes)")
            if model == "mpu6050" {
                #expect(writes.contains("write current_timestamp_clock='monotonic' ok"), "\(writes)")
            }
            #expect(r.events.filter { $0["event"] as? String == "fault" }.isEmpty, "timestamps on our clock: no stall")
        } else {
            #expect(opened["rate"] as? Double == 50)
            #expect(writes.first == "write in_accel_sampling_frequency='40' ok", "\(writes)")
            #expect(writes.contains("write in_accel_sampling_frequency='50' ok"), "\(writes)")
            #expect(!writes.contains { $0.contains("in_accel_scale") }, "\(writes)")
        }
    }

    /// Buffered capture wakes user space once per watermark (0.4 s of data), not per sample:
    /// libiio's buffer of 16 samples at 40 Hz sets `buffer/watermark` = 16, and the emulated
    /// kernel hands them over in blocks of 16.
    @Test func bufferedCaptureWakesOncePerWatermark() throws {
        let dir = NSTemporaryDirectory() + "fg-wm-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Emulator.run(["--model", "mpu6050", "--recording", Emulator.fixtures + "/D01_SA08_R01.csv",
                                  "--write-log", dir + "/log.csv"],
                                 [Emulator.fallguard, "watch", "--json", "--duration", "6", "--arrival-log", dir + "/arr.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        let log = try String(contentsOfFile: dir + "/log.csv", encoding: .utf8)
        #expect(log.contains("watermark=16"), "\(log.split(separator: "\n").filter { $0.contains("buffer enable") })")
        // Arrivals come in bursts: consecutive samples within a burst arrive together.
        let arrivals = try String(contentsOfFile: dir + "/arr.txt", encoding: .utf8).split(separator: "\n")
            .compactMap { Int64($0.split(separator: ",").first ?? "") }
        #expect(arrivals.count >= 160)
        var bursts = 1
        for (a, b) in zip(arrivals, arrivals.dropFirst()) where b - a > 100_000_000 { bursts += 1 }
        #expect(bursts <= arrivals.count / 12, "\(bursts) wake-ups for \(arrivals.count) samples")
    }

    @Test(arguments: models)
    func aRealFallStreamedThroughTheDriverIsDetectedOnce(model: String) throws {
        let r = try Emulator.run(["--model", model, "--recording", Emulator.fixtures + "/F01_SA02_R01.csv"],
                                 [Emulator.fallguard, "watch", "--json", "--duration", "16"])
        #expect(r.status == 0, "\(r.stderr)")
        let falls = r.events.filter { $0["event"] as? String == "fall" }
        #expect(falls.count == 1, "\(r.stdout)")
        #expect(!r.events.contains { $0["event"] as? String == "fault" }, "\(r.stdout)")
    }

    @Test func joggingStreamedThroughTheDriverRaisesNothing() throws {
        let r = try Emulator.run(["--model", "adxl345-buffered", "--recording", Emulator.fixtures + "/D04_SA09_R01.csv"],
                                 [Emulator.fallguard, "watch", "--json", "--duration", "14"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.events.contains { $0["event"] as? String == "fall" })
        #expect(!r.events.contains { $0["event"] as? String == "fault" }, "\(r.stdout)")
    }

    /// Each injected fault is reported as a sensor fault and then as recovered.
    @Test(arguments: [
        ("mpu6050", "stall@2:3", "stalled", 10),
        ("adxl345-buffered", "stall@2:3", "stalled", 10),
        // A polled driver that stops updating reads the same registers again: stuck after 60 s.
        ("adxl345-direct", "stall@2:63", "stuck", 70),
        ("mpu6050", "unplug@2:3", "disappeared", 10),
        ("adxl345-direct", "unplug@2:3", "disappeared", 10),
        ("adxl345-direct", "saturate@2:3", "saturated", 10),
        ("mpu6050", "garbage@2:3", "implausible", 20),
        ("adxl345-direct", "garbage@2:3", "io-error", 10),
    ])
    func faultsAreReportedAndRecovered(model: String, fault: String, problem: String, seconds: Int) throws {
        let r = try Emulator.run(["--model", model, "--recording", Emulator.fixtures + "/D01_SA08_R01.csv", "--fault", fault],
                                 [Emulator.fallguard, "watch", "--json", "--duration", String(seconds)])
        #expect(r.status == 0, "\(r.stderr)")
        let faults = r.events.filter { $0["event"] as? String == "fault" }.compactMap { $0["problem"] as? String }
        let recovered = r.events.filter { $0["event"] as? String == "recovered" }.compactMap { $0["problem"] as? String }
        #expect(faults.contains(problem), "faults \(faults)\n\(r.stdout)")
        #expect(Set(recovered) == Set(faults), "every fault recovers: \(faults) vs \(recovered)")
        #expect(!r.events.contains { $0["event"] as? String == "fall" })
    }

    /// The consumer stalls for 200 ms (issue 29, item 3), 3 s into the stream, on the thread
    /// that both captures and detects. Buffered (the default; both drivers have a trigger): the
    /// driver's buffer holds the samples meanwhile, so none is lost and every step between two
    /// samples' times is the driver's 25 ms. Polled (the fallback without a buffer): the
    /// register holds only its newest value, so the stall is a hole in the signal, and the
    /// times say so (one step of about 200 ms) instead of inventing samples in it.
    @Test(arguments: [false, true])
    func aConsumerStallingFor200MillisecondsLosesNothingBufferedAndShowsInTheTimesPolled(polled: Bool) throws {
        let r = try Emulator.run(["--model", "mpu6050", "--recording", Emulator.fixtures + "/D01_SA08_R01.csv", "--loop"],
                                 [Emulator.fallguard, "watch", "--json", "--duration", "6", "--stall", "3:200"]
                                    + (polled ? ["--polled"] : []))
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try #require(r.events.first { $0["event"] as? String == "summary" }, "\(r.stdout)")
        let (minStep, maxStep) = (summary["min_step_s"] as? Double ?? 0, summary["max_step_s"] as? Double ?? 0)
        let raw = summary["raw_samples"] as? Int ?? 0
        #expect(raw > 150, "\(summary)")
        #expect(summary["overruns"] as? Int == 0, "\(summary)")
        if polled {
            #expect(maxStep >= 0.19 && maxStep < 0.5, "the 200 ms hole is in the times: \(summary)")
        } else {
            #expect(abs(minStep - 0.025) < 0.001 && abs(maxStep - 0.025) < 0.001,
                    "every step is the driver's 25 ms through the stall: \(summary)")
            #expect(summary["gaps"] as? Int == 0, "\(summary)")
        }
    }
}
