import FallGuardCore
import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

/// `fallguard alarm --buzzer gpio` in the GPIO emulator with a real fall recording as the
/// sensor: the buzzer sounds, the countdown runs, the button aborts it, or it expires and the
/// alert reaches the sink (standard output). Real time and serialized. The recording is SisFall
/// F01 without its first 6 s (`shortFallRecording`): the detector fires about 6 s in.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct AlarmEndToEndTests {
    /// Starts the alarm in the emulator; `FALL` in `extra` stands for the short fall recording.
    func alarm(_ extra: [String], duration: Double, lib: GPIOLib) throws -> (GPIOEmulatorRun, String) {
        let dir = NSTemporaryDirectory() + "fg-alarm-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fall = try shortFallRecording(in: dir)
        let run = try GPIOEmulatorRun(["alarm", "--buzzer", "gpio", "--gpio-library", lib.rawValue, "--led-line", "GPIO27", "--countdown", "5", "--final-phase", "2",
                                       "--state", dir + "/state", "--duration", "\(duration)"] + extra.map { $0 == "FALL" ? fall : $0 },
                                      library: lib)
        return (run, dir)
    }

    @Test(arguments: GPIOLib.allCases)
    func aFallSoundsTheBuzzerAndAShortPressAbortsTheCountdown(lib: GPIOLib) throws {
        let (run, dir) = try alarm(["--recording", "FALL"], duration: 12, lib: lib)
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        let fall = try #require(run.waitFor("fall-suspected", timeout: 20), "\(run.stdout)\n\(run.stderr)")
        let fallNs = try #require(fall.ns("t_ns"))
        usleep(1_500_000)
        #expect(try run.ctl("hold 17 200").hasPrefix("ok"))
        #expect(run.wait() == 0, "\(run.stderr)")
        #expect(run.waitFor("alert", timeout: 0) == nil, "no alert after an abort: \(run.stdout)")
        let buzzer = try run.levels(offset: 18)
        let firstOn = try #require(buzzer.first { $0.value == 1 })
        #expect(firstOn.t >= fallNs && firstOn.t - fallNs < 1_000_000_000, "buzzer on \(Double(firstOn.t - fallNs) / 1e6) ms after the detection")
        #expect(buzzer.last?.value == 0)
        let led = try run.levels(offset: 27)
        #expect(led.count >= 4, "the LED blinks")
        let log = try incidents(dir)
        let kinds = log.compactMap { $0["event"] as? String }
        #expect(kinds.starts(with: ["fall-suspected", "false-alarm"]), "\(kinds)")
        #expect((log[1]["fall"] as? [String: Any])?["detector"] as? String == "multiphase")
    }

    @Test(arguments: GPIOLib.allCases)
    func anUnabortedFallAlertReachesTheSinkAtExpiry(lib: GPIOLib) throws {
        let (run, dir) = try alarm(["--recording", "FALL"], duration: 14, lib: lib)
        let fall = try #require(run.waitFor("fall-suspected", timeout: 20), "\(run.stderr)")
        let alert = try #require(run.waitFor("alert", timeout: 10), "\(run.stdout)")
        #expect(run.wait() == 0, "\(run.stderr)")
        let a = try #require(alert["alert"] as? [String: Any])
        #expect(a["kind"] as? String == "fall" && a["incident"] as? String == "FG-1" && a["severity"] as? String == "alarm")
        let after = Double(try #require(alert.ns("t_ns")) - (try #require(fall.ns("t_ns")))) / 1e9
        #expect(after >= 4.9 && after < 6.5, "alert \(after) s after the detection")
        let kinds = try incidents(dir).compactMap { $0["event"] as? String }
        #expect(kinds == ["fall-suspected", "final-phase", "countdown-expired"], "\(kinds)")
        // the calm alert-active pattern follows: the buzzer still beeps after the alert
        let alertNs = try #require(alert.ns("t_ns"))
        #expect(try run.levels(offset: 18).contains { $0.t > alertNs && $0.value == 1 })
    }

    @Test(arguments: GPIOLib.allCases)
    func aPressWithNoIncidentIsIgnoredAndLogged(lib: GPIOLib) throws {
        let (run, dir) = try alarm([], duration: 2, lib: lib)
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        #expect(try run.ctl("hold 17 150").hasPrefix("ok"))
        #expect(run.wait() == 0, "\(run.stderr)")
        let log = try incidents(dir)
        #expect(log.count == 1)
        #expect(log.first?["event"] as? String == "press-ignored")
        #expect(log.first?["incident"] == nil)
        #expect(try run.levels(offset: 18).allSatisfy { $0.value == 0 }, "the buzzer stays silent")
        #expect(run.waitFor("alert", timeout: 0) == nil)
    }

    func incidents(_ dir: String) throws -> [[String: Any]] {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        return try String(contentsOfFile: dir + "/state/incidents.jsonl", encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }
}

/// The controller in-process, without GPIO: remote acknowledgement of a help request.
@Suite struct AlarmControllerTests {
    final class Collect: AlertSink, @unchecked Sendable {
        let lock = NSLock()
        var alerts: [Alert] = []
        func deliver(_ alert: Alert) throws { lock.withLock { alerts.append(alert) } }
        var kinds: [AlertKind] { lock.withLock { alerts.map(\.kind) } }
    }

    @Test func aLongPressRequestsHelpAndARemoteAcknowledgementEndsIt() throws {
        let dir = NSTemporaryDirectory() + "fg-ctl-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sink = Collect()
        let c = try AlarmController(settings: alarmSection(longPress: 0.5), buzzer: nil, led: nil, button: nil,
                                    sink: sink, incidentLog: try IncidentLog(stateDirectory: dir))
        c.start()
        c.button(.pressed(at: MonotonicClock.nanoseconds()))
        for _ in 0..<300 where sink.kinds.isEmpty { usleep(10_000) }
        #expect(sink.kinds == [.helpRequested])
        c.acknowledge(incident: "FG-1", by: "+15550100")
        for _ in 0..<300 where sink.kinds.count < 2 { usleep(10_000) }
        c.stop()
        #expect(sink.kinds == [.helpRequested, .acknowledged])
        #expect(sink.alerts.last?.acknowledgedBy == "+15550100")
        let lines = try String(contentsOfFile: dir + "/incidents.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2 && lines.allSatisfy { $0.hasPrefix(#"{"wall-time":""#) })
        #expect(c.snapshot.state == .monitoring)
    }
}

extension AlarmControllerTests {
    @Test func overlappingSensorProblemsAreOneFaultReportedAfterTheGraceAndOneRecovery() throws {
        let sink = Collect()
        let c = try AlarmController(settings: alarmSection(faultGrace: 0.2), buzzer: nil, led: nil, button: nil,
                                    sink: sink, incidentLog: nil)
        c.start()
        c.sensorHealth(SensorHealthChange(problem: .stalled, isFault: true, time: 0, detail: "no samples"), device: "iio:device0 (adxl345)")
        c.sensorHealth(SensorHealthChange(problem: .ioError, isFault: true, time: 0, detail: "EIO"), device: "iio:device0 (adxl345)")
        for _ in 0..<300 where sink.kinds.isEmpty { usleep(10_000) }
        #expect(sink.kinds == [.deviceProblem])
        #expect(sink.alerts.first?.sensorFault?.device == "iio:device0 (adxl345)")
        c.sensorHealth(SensorHealthChange(problem: .stalled, isFault: false, time: 1, detail: ""), device: "iio:device0 (adxl345)")
        usleep(100_000)
        #expect(sink.kinds == [.deviceProblem], "one problem still active")
        c.sensorHealth(SensorHealthChange(problem: .ioError, isFault: false, time: 1, detail: ""), device: "iio:device0 (adxl345)")
        for _ in 0..<300 where sink.kinds.count < 2 { usleep(10_000) }
        c.stop()
        #expect(sink.kinds == [.deviceProblem, .deviceRecovered])
        #expect(c.snapshot.sensorFault == nil)
    }
}
