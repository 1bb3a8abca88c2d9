import ArgumentParser
import FallGuardConfig
import FallGuardDaemon
import FallGuardHardware
import FallGuardNotify
import Foundation
import Logging
import Metrics
import Prometheus

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The daemon: sensor → detector → countdown on the buzzer → alerts.",
        discussion: """
            With --config, everything comes from that YAML file (deploy/fallguard.example.yaml \
            documents every key); any configuration error stops start-up with exit status 78. \
            Without --config it runs the embedded demo: the bundled real fall recording streamed \
            in real time as the sensor (or this machine's accelerometer, when it has one), the \
            terminal as buzzer, LED and button (\(ConsoleButton.help)), and a console notifier \
            behind the local outbox. SIGTERM/SIGINT stop it gracefully; SIGHUP reloads the file.
            """)

    @Option(help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config: String?

    @Option(help: ArgumentHelp("Override the state directory.", valueName: "dir"))
    var state: String?

    @Option(help: ArgumentHelp("Override metrics.listen, the address of the page and /metrics (e.g. 127.0.0.1:8080).", valueName: "host:port"))
    var listen: String?

    @Option(help: ArgumentHelp("Stop gracefully after this many seconds (tests, benches).", valueName: "seconds"))
    var duration: Seconds?

    func run() async throws {
        let start = ProgramStart.now()
        EarlyHangup.catchUntilTrapped()   // a SIGHUP from here on is a reload, never the end of the process
        var configuration: DaemonConfiguration
        if let config {
            let (c, found) = DaemonConfiguration.load(path: config)
            let diagnostics = found + [c.nobodyWillBeToldWarning].compactMap { $0 }
            if ConfigReport.printAndShouldStop(diagnostics.redacted(by: c.redactor)) {
                throw ExitCode(ConfigReport.exitStatus)
            }
            configuration = c
        } else {
            configuration = .demo()
            if let found = try? AccelerometerDiscovery.list(uri: "local:"), !found.isEmpty {
                configuration.path = nil
                configuration.liveDemo = true
            }
        }
        if let state { configuration.state.directory = state }
        if let listen {
            var m = configuration.metrics
            m.listen = listen
            var file = configuration.file
            file.metrics = m
            let problems = m.problems(at: []).map { ConfigProblem(["--listen"], $0.message, severity: $0.severity) } + file.webAccessProblems(at: [])
            for p in problems { printError("\(p.severity == .warning ? "warning: " : "")\(p.keyPath.joined(separator: ".")): \(p.message)") }
            if problems.contains(where: { $0.severity != .warning }) { throw ExitCode(ConfigReport.exitStatus) }
            configuration.metrics = m
        }
        let level = Logger.Level(rawValue: configuration.log.level.rawValue) ?? .info
        let redactor = configuration.redactor
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level, redactor: redactor) }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let logger = Logger(label: "fallguard")
        if config == nil {
            logger.notice("no --config: running the demo (\(configuration.liveDemo ? "this machine's accelerometer" : "the bundled fall recording"), console buzzer and button)")
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(configuration: configuration, registry: registry, logger: logger, start: start)
        } catch {
            printError(error.description)
            throw ExitCode(error.status)
        }
        try await daemon.run(duration: duration?.value)
    }
}

struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a configuration file: every problem, each with its file and line.",
        discussion: """
            Checks the YAML, every key and value, the detector settings, the GPIO chip and lines \
            (present and free), URLs, E.164 phone numbers and that every credential is there. \
            A file with a top-level station: section is checked as the staff station's \
            (`fallguard station`): its keys, logins, secrets, TLS files and state directory. \
            Exit status 0 when it would start (warnings allowed), 78 when it would not.
            """)

    @Option(help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config = "/etc/fallguard/config.yaml"

    @Flag(help: "Skip opening the GPIO lines (e.g. checking a Pi's file on another machine).")
    var noHardware = false

    func run() throws {
        if StationConfiguration.describes(path: config) { return try checkStation() }
        let (c, found) = DaemonConfiguration.load(path: config)
        var diagnostics = found + [c.nobodyWillBeToldWarning].compactMap { $0 }
        if !noHardware, c.gpio.enabled, !diagnostics.contains(where: \.isError) {
            do {
                _ = try LocalAlarm.outputs(.gpio, alarm: c.alarm, gpio: c.gpio, logger: Logger(label: "fallguard.check-config"))
            } catch {
                // The service holds its lines while it runs (step 8 of docs/raspberry-pi.md checks
                // the file with the service up): lines busy under our own consumer are not a problem.
                let held = error.description.contains("is busy: used by \"\(c.gpio.wiring.consumer)\"")
                diagnostics.append(ConfigDiagnostic(file: config, line: nil, problem: held
                    ? .init(["gpio"], "\(error.description): a running fallguard holds the lines (not checked)", severity: .warning)
                    : .init(["gpio"], error.description)))
            }
        }
        if !noHardware, !diagnostics.contains(where: \.isError) { diagnostics += Self.modemProblems(c, file: config) }
        if ConfigReport.printAndShouldStop(diagnostics.redacted(by: c.redactor)) { throw ExitCode(ConfigReport.exitStatus) }
        print("\(config): OK\(Self.warnings(diagnostics))")
    }

    /// What stops each `modem` channel's modem from sending now (no SIM, PIN, no signal,
    /// unplugged, ModemManager not running), as warnings: the daemon starts anyway, says it in
    /// its status and sends when the modem can.
    static func modemProblems(_ c: DaemonConfiguration, file: String) -> [ConfigDiagnostic] {
        let modems = (c.notify.settings?.channels ?? [:]).compactMapValues { $0 as? ModemOptions }
        var found: [ConfigDiagnostic] = []
        for name in modems.keys.sorted() {
            let manager = modems[name]!.manager
            let answer = (try? runBlocking { () -> String? in
                do { return try await manager.status().problem } catch { return "\(error)" }
            }) ?? nil
            if let problem = answer {
                found.append(ConfigDiagnostic(file: file, line: nil, problem: .init(["channels", name], "the modem cannot send now: \(problem)",
                                                                                 severity: .warning)))
            }
        }
        return found
    }

    /// A station's file, as `fallguard station` reads it at start.
    func checkStation() throws {
        let (c, diagnostics) = StationConfiguration.load(path: config)
        if ConfigReport.printAndShouldStop(diagnostics.redacted(by: c.redactor)) { throw ExitCode(ConfigReport.exitStatus) }
        print("\(config): OK, a station's file\(Self.warnings(diagnostics))")
    }

    static func warnings(_ diagnostics: [ConfigDiagnostic]) -> String {
        diagnostics.isEmpty ? "" : " (\(diagnostics.count) warning\(diagnostics.count == 1 ? "" : "s"))"
    }
}
