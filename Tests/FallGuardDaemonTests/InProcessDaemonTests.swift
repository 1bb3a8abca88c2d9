import FallGuardConfig
import FallGuardCore
import FallGuardDaemon
import FallGuardHardware
import FallGuardTestSupport
import Foundation
import Logging
import Prometheus
import Testing

/// The assembled daemon in this process: the services `fallguard run` starts, on a replayed
/// real fall (SisFall F13_SA06_R01, a faint from a chair, detected about 8.2 s in), with the
/// buzzer, LED and button on an in-memory GPIO chip and alerts through an `exec` channel.
@Suite(.serialized) struct InProcessDaemonTests {
    /// A daemon on `gpio` whose alerts are appended to `<dir>/alerts.jsonl`.
    static func daemon(in dir: TempDirectory, gpio: InMemoryGPIO) throws -> Daemon {
        let config = dir.path + "/config.yaml"
        try writeExecConfig(config, folder: dir.path,
                            gpio: "{chip: gpiochip0, buzzer: {line: GPIO18}, button: {line: GPIO17}, led: {line: GPIO27}}")
        let (configuration, diagnostics) = DaemonConfiguration.load(path: config)
        #expect(!diagnostics.contains { $0.isError }, "\(diagnostics)")
        let logger = Logger(label: "test.daemon")
        let outputs = try AlarmOutputs.make(.gpio, gpio: configuration.gpio.wiring, button: configuration.alarm.buttonTimings,
                                            patterns: configuration.alarm.patterns, logger: logger, backend: gpio)
        return try Daemon(configuration: configuration, registry: PrometheusCollectorRegistry(), logger: logger,
                          outputs: outputs)
    }

    static func alerts(_ dir: TempDirectory) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: dir.path + "/alerts.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Runs a daemon on a new in-memory chip until its countdown starts, then `body`.
    static func withDaemonInCountdown(_ body: (Daemon, InMemoryGPIO, TempDirectory) async throws -> Void) async throws {
        let dir = TempDirectory("daemon")
        umask(0o022)   // as a shell would have it; the daemon sets 077 for the whole process
        defer { umask(0o022) }
        let gpio = InMemoryGPIO()
        let daemon = try Self.daemon(in: dir, gpio: gpio)
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
            // Health data: the state directory 0700 and every file in it 0600, whatever the umask.
            let fm = FileManager.default
            let mode = { (path: String) in ((try? fm.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1) & 0o777 }
            #expect(mode(dir.path + "/state") == 0o700)
            for file in try fm.contentsOfDirectory(atPath: dir.path + "/state") {
                #expect(mode(dir.path + "/state/" + file) == 0o600, "\(file)")
            }
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
}
