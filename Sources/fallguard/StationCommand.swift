import ArgumentParser
import FallGuardConfig
import FallGuardDaemon
import Foundation
import Logging

struct StationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "station",
        abstract: "The staff station: every bridge of a site on one page, alarms first, acknowledged by name.",
        discussion: """
            Reads the file's station: section (docs/care-home.md), subscribes to the site broker's \
            <topic-prefix>/# and serves the page at station.listen: every bridge with its wearer, \
            location, state, last heartbeat and connection; open alarms first with the time since \
            they were raised, who was told and who answered; a sound while an alarm is open and \
            not taken; and an acknowledge button that sends, in the signed-in member of staff's \
            name, an acknowledgement proven with the bridge's acknowledge-secret (only that bridge \
            accepts it). Any configuration error stops start-up with exit status 78.
            """)

    @Option(help: ArgumentHelp("The station's configuration file.", valueName: "path"))
    var config: String = "/etc/fallguard/station.yaml"

    @Option(help: ArgumentHelp("Stop gracefully after this many seconds (tests, benches).", valueName: "seconds"))
    var duration: Seconds?

    @Option(help: ArgumentHelp("Print this bridge's acknowledge-secret (derived from site-key, or its own) and exit.", valueName: "device"))
    var bridgeKey: String?

    func run() async throws {
        let (c, diagnostics) = StationConfiguration.load(path: config)
        if ConfigReport.printAndShouldStop(diagnostics.redacted(by: c.redactor)) {
            throw ExitCode(ConfigReport.exitStatus)
        }
        if let device = bridgeKey {
            guard let key = c.station.secret(for: device) else {
                printError("\(config): station.site-key: not set: no key for \(device)")
                throw ExitCode(ConfigReport.exitStatus)
            }
            print(key)
            return
        }
        let redactor = c.redactor
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: .info, redactor: redactor) }
        let logger = Logger(label: "fallguard.station")
        let server: StationServer
        do {
            server = try StationServer(section: c.station, logger: logger)
        } catch let error as DaemonStartError {
            printError(error.description)
            throw ExitCode(error.status)
        }
        try await server.run(duration: duration?.value, configPath: config) { port in
            logger.notice("station: serving http\(c.station.tls == nil ? "" : "s")://\(c.station.address?.host ?? "?"):\(port)/ for \(c.station.staff.count) members of staff")
        }
    }
}
