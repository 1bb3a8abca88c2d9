import FallGuardConfig
import FallGuardCore
import FallGuardDaemon
import FallGuardHardware
import FallGuardTestSupport
import Foundation
@testable import FallGuardNotify
import GRDB
import Logging
import Prometheus
import Testing

/// The assembled daemon in this process: the services `fallguard run` starts, on a replayed
/// real fall (SisFall F13_SA06_R01, a faint from a chair, detected about 8.2 s in), with the
/// buzzer, LED and button on an in-memory GPIO chip and alerts through an `exec` channel.
@Suite(.serialized) struct InProcessDaemonTests {
    /// A daemon on `gpio` whose alerts are appended to `<dir>/alerts.jsonl`.
    static func daemon(in dir: TempDirectory, gpio: InMemoryGPIO, failingOnce: Bool = false, extra: String = "") throws -> Daemon {
        let config = dir.path + "/config.yaml"
        try writeExecConfig(config, folder: dir.path,
                            gpio: "{chip: gpiochip0, buzzer: {line: GPIO18}, button: {line: GPIO17}, led: {line: GPIO27}}",
                            failingOnce: failingOnce, extra: extra)
        let (configuration, diagnostics) = DaemonConfiguration.load(path: config)
        #expect(!diagnostics.contains { $0.isError }, "\(diagnostics)")
        let logger = Logger(label: "test.daemon")
        let outputs = try AlarmOutputs.make(.gpio, gpio: configuration.gpio.wiring, button: configuration.alarm.buttonTimings,
                                            patterns: configuration.alarm.alarmPatterns, logger: logger, backend: gpio)
        return try Daemon(configuration: configuration, registry: PrometheusCollectorRegistry(), logger: logger,
                          outputs: outputs)
    }

    static func alerts(_ dir: TempDirectory) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: dir.path + "/alerts.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Runs a daemon on a new in-memory chip until its countdown starts, then `body`.
    static func withDaemonInCountdown(extra: String = "", _ body: (Daemon, InMemoryGPIO, TempDirectory) async throws -> Void) async throws {
        let dir = TempDirectory("daemon")
        umask(0o022)   // as a shell would have it; the daemon sets 077 for the whole process
        defer { umask(0o022) }
        let gpio = InMemoryGPIO()
        let daemon = try Self.daemon(in: dir, gpio: gpio, extra: extra)
        let run = Task { try await daemon.run(duration: 30) }
        defer { run.cancel() }
        #expect(await until(20) { daemon.alarm.snapshot.status == .countdown }, "the fall starts the countdown")
        try await body(daemon, gpio, dir)
        run.cancel()
        _ = try? await run.value
    }

    @Test func aFallCountsDownOnTheBuzzerAndTheAlertGoesOut() async throws {
        try await Self.withDaemonInCountdown { daemon, gpio, dir in
            #expect(gpio.levels(of: "GPIO18").contains { $0.active }, "the buzzer sounds")
            #expect(await until(15) { Self.alerts(dir).contains { ($0["alert"] as? [String: Any])?["kind"] as? String == "fall" } },
                    "the fall alert goes out through the exec channel")
            #expect(daemon.alarm.snapshot.status == .alertOut)
            let status = try DaemonStatus.read(from: dir.path + "/state")
            #expect(status.readyMs != nil, "\(status)")
            Self.expectHealthDataModes(dir.path + "/state")
        }
    }

    @Test func aPressDuringTheCountdownAbortsIt() async throws {
        try await Self.withDaemonInCountdown { daemon, gpio, dir in
            gpio.set(input: "GPIO17", active: true)
            try await Task.sleep(for: .milliseconds(200))
            gpio.set(input: "GPIO17", active: false)
            #expect(await until(5) { daemon.alarm.snapshot.status == .monitoring }, "a short press aborts the countdown")
            try await Task.sleep(for: .seconds(6))   // past the countdown's end
            #expect(Self.alerts(dir).isEmpty, "no alert after an abort: \(Self.alerts(dir))")
            let log = try String(contentsOfFile: dir.path + "/state/incidents.jsonl", encoding: .utf8)
            #expect(log.contains("\"false-alarm\""), "\(log)")
        }
    }

    /// Health data: the state directory and every folder in it 0700, every file 0600, whatever the umask.
    static func expectHealthDataModes(_ state: String) {
        let fm = FileManager.default
        let mode = { (path: String) in ((try? fm.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1) & 0o777 }
        #expect(mode(state) == 0o700)
        for item in fm.subpaths(atPath: state) ?? [] {
            var isFolder: ObjCBool = false
            _ = fm.fileExists(atPath: state + "/" + item, isDirectory: &isFolder)
            #expect(mode(state + "/" + item) == (isFolder.boolValue ? 0o700 : 0o600), "\(item)")
        }
    }

    static func fallAlerts(_ dir: TempDirectory) -> [[String: Any]] {
        alerts(dir).filter { ($0["alert"] as? [String: Any])?["kind"] as? String == "fall" }
    }

    /// Makes every write to the daemon's outbox fail, as a read-only file does (SQLITE_READONLY).
    static func outboxReadOnly(_ daemon: Daemon, _ on: Bool) throws {
        try daemon.notifiers.outbox.db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA query_only = \(on ? 1 : 0)") }
    }

    @Test func aReadOnlyOutboxStillGetsTheFallAlertOutSaysSoAndCatchesUpWithoutSendingTwice() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        let daemon = try Self.daemon(in: dir, gpio: InMemoryGPIO())
        try Self.outboxReadOnly(daemon, true)
        let run = Task { try await daemon.run(duration: 40) }
        defer { run.cancel() }
        #expect(await until(25) { Self.fallAlerts(dir).count == 1 }, "the fall alert goes out directly through the exec channel")
        #expect(await until(3) { (try? DaemonStatus.read(from: dir.path + "/state"))?.outbox?.heldInMemory == 1 })
        let status = try DaemonStatus.read(from: dir.path + "/state")
        #expect(status.problems?.first?.contains("the outbox cannot take alerts") == true, "\(status.problems ?? [])")
        #expect(status.problems?.first?.contains("1 alert held in memory") == true, "\(status.problems ?? [])")
        let key = (Self.fallAlerts(dir).first?["idempotencyKey"] as? String) ?? "none"
        try Self.outboxReadOnly(daemon, false)
        #expect(await until(5) { (try? DaemonStatus.read(from: dir.path + "/state"))?.problems == [] }, "healthy again")
        let rows = try daemon.notifiers.outbox.deliveries().filter { $0.delivery.payload.alert.kind == .fall }
        #expect(rows.map(\.idempotencyKey) == [key] && rows.allSatisfy { $0.state == .sent }, "\(rows)")
        try await Task.sleep(for: .seconds(2))
        #expect(Self.fallAlerts(dir).count == 1, "the outbox does not send it again")
    }

    @Test func anIncidentLogThatCannotBeOpenedDoesNotStopMonitoring() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        // A directory in its place: open(2) fails for root too (EISDIR), as it does for the
        // service user with a file root created.
        try FileManager.default.createDirectory(atPath: dir.path + "/state/incidents.jsonl", withIntermediateDirectories: true)
        let gpio = InMemoryGPIO()
        let daemon = try Self.daemon(in: dir, gpio: gpio)
        #expect(daemon.problems.first?.contains("incident log: cannot open") == true, "\(daemon.problems)")
        let run = Task { try await daemon.run(duration: 40) }
        defer { run.cancel() }
        // Before the fall (8.2 s in), the LED blinks the fault pattern (three blinks 250 ms apart,
        // the next three 1.75 s after the first), not the monitoring heartbeat (one every 2 s) nor
        // the countdown (one every 200 ms): judged on the levels' own times, as soon as a full
        // period has played, not by counting blinks in a fixed 5 s that a slow start eats into.
        func faultPeriod() -> Bool {
            let on = gpio.levels(of: "GPIO27").filter(\.active).map { Double($0.nanoseconds) / 1e9 }
            return on.count >= 4 && (0..<(on.count - 3)).contains { i in
                let gaps = (0..<3).map { on[i + $0 + 1] - on[i + $0] }
                return gaps[0] > 0.2 && gaps[0] < 0.3 && gaps[1] > 0.2 && gaps[1] < 0.3 && gaps[2] > 1.1 && gaps[2] < 1.4
            }
        }
        #expect(await until(8) { faultPeriod() }, "the fault pattern: \(gpio.levels(of: "GPIO27").filter(\.active).map(\.nanoseconds))")
        #expect(await until(25) { Self.fallAlerts(dir).count == 1 }, "the fall alert still goes out")
        let status = try DaemonStatus.read(from: dir.path + "/state")
        #expect(status.problems?.contains { $0.contains("incident log") } == true, "\(status.problems ?? [])")
    }

    @Test func aStopDuringTheCountdownSendsTheFallAlertBeforeTheProcessEnds() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        // The first send fails: only a stop that drains retries it.
        let daemon = try Self.daemon(in: dir, gpio: InMemoryGPIO(), failingOnce: true)
        // The fall is detected about 8.2 s in; the countdown lasts 5 s.
        let started = ContinuousClock.now
        try await daemon.run(duration: 10)
        let took = ContinuousClock.now - started
        #expect(Self.fallAlerts(dir).count == 1, "the cut-short countdown's alert went out before run returned")
        #expect(took < .seconds(10 + daemon.configuration.state.drainOnStop), "\(took)")
        #expect(try daemon.notifiers.outbox.metrics().pending == 0)
    }

    @Test func aFallTheLastProcessLoggedButNeverStoredGoesOutAtStart() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        let now = Date().timeIntervalSince1970
        let line = { (t: Double, id: String, event: String) in
            #"{"wall-time":"\#(iso8601(secondsSince1970: t))","time":12.5,"incident":"\#(id)","event":"\#(event)","detail":"-"}"#
        }
        // FG-6 ended long ago; FG-7's countdown began 20 s ago and the process died before arming it.
        try FileManager.default.createDirectory(atPath: dir.path + "/state", withIntermediateDirectories: true)
        try [line(now - 7200, "FG-6", "fall-suspected"), line(now - 7190, "FG-6", "false-alarm"),
             line(now - 20, "FG-7", "fall-suspected")].joined(separator: "\n").appending("\n")
            .write(toFile: dir.path + "/state/incidents.jsonl", atomically: true, encoding: .utf8)
        let daemon = try Self.daemon(in: dir, gpio: InMemoryGPIO())
        let run = Task { try await daemon.run(duration: 4) }
        defer { run.cancel() }
        #expect(await until(5) { Self.fallAlerts(dir).contains { ($0["alert"] as? [String: Any])?["incident"] as? String == "FG-7" } },
                "\(Self.alerts(dir))")
        // Nobody aborted it: the alarm takes the alert over, sounding, and an acknowledgement ends it.
        #expect(await until(2) { daemon.alarm.snapshot.state.incident == "FG-7" && daemon.alarm.snapshot.status == .alertOut })
        daemon.alarm.acknowledge(incident: "FG-7", by: "Anna")
        #expect(await until(2) { daemon.alarm.snapshot.status == .monitoring })
        #expect(await until(3) { Self.alerts(dir).contains { ($0["alert"] as? [String: Any])?["kind"] as? String == "acknowledged" } },
                "\(Self.alerts(dir))")
        _ = try? await run.value
        let log = try String(contentsOfFile: dir.path + "/state/incidents.jsonl", encoding: .utf8)
        #expect(log.contains(#""event":"countdown-expired","incident":"FG-7""#), "\(log)")
        // A second start finds it ended: nothing goes out twice.
        let again = try Self.daemon(in: dir, gpio: InMemoryGPIO())
        try await again.run(duration: 1)
        #expect(try again.notifiers.outbox.deliveries(incident: "FG-7").map(\.delivery.payload.alert.kind) == [.fall, .acknowledged])
        #expect(again.alarm.snapshot.status == .monitoring, "an acknowledged alarm is not taken over again")
    }

    @Test func aChannelThatCannotStartLeavesTheAlarmAndTheOtherChannelsRunning() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        let config = dir.path + "/config.yaml", ca = dir.write("ca.pem", "not a certificate")
        try writeExecConfig(config, folder: dir.path)
        let text = try String(contentsOfFile: config, encoding: .utf8)
            .replacingOccurrences(of: "channels:\n", with: "channels:\n  broker: {type: mqtt, host: 127.0.0.1, tls: true, ca-file: \(ca)}\n")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let (configuration, diagnostics) = DaemonConfiguration.load(path: config)
        #expect(!diagnostics.contains { $0.isError }, "\(diagnostics)")
        try FileManager.default.removeItem(atPath: ca)   // gone between the check and the start
        let daemon = try Daemon(configuration: configuration, registry: PrometheusCollectorRegistry(), logger: Logger(label: "test.daemon"))
        #expect(daemon.problems.contains { $0.hasPrefix("channel broker could not start") }, "\(daemon.problems)")
        try await daemon.run(duration: 14)
        #expect(Self.fallAlerts(dir).count == 1, "the fall still goes out through the exec channel")
    }
}
