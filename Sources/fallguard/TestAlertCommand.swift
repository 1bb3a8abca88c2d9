import ArgumentParser
import FallGuardDaemon
import FallGuardCore
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Logging

/// `fallguard test-alert`: a clearly marked test through every configured channel (or one),
/// sent at once, with each channel's result.
struct TestAlertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-alert",
        abstract: "Send a clearly marked TEST alert through the configured channels and print each result.",
        discussion: """
            SMS, call and e-mail channels go to the primary contact (--all-contacts: to every \
            contact); webhook, exec and console channels send once. Exit status 0 when every \
            message went out, 1 when any failed, 78 for configuration problems (each printed \
            with its key).
            """
    )

    @OptionGroup var settingsOptions: NotifySettingsOptions

    @Option(name: .long, help: ArgumentHelp("Only this channel (a key of `channels`).", valueName: "name"))
    var channel: String?

    @Flag(name: .long, help: "Send to every contact, not only the primary one.")
    var allContacts = false

    /// `<the bridge's client id>-test-<pid>`.
    static func testClientID(for settings: MQTTChannelSettings) -> String {
        "\(settings.effectiveClientID)-test-\(getpid())"
    }

    func run() throws {
        var loaded = try settingsOptions.load()
        // A client id of its own: the broker drops an older connection with the same id, and
        // `fallguard-<device>` is the running bridge's (its acks and its last will with it).
        for (name, options) in loaded.channels {
            guard var mqtt = options as? MQTTChannelSettings else { continue }
            mqtt.clientID = Self.testClientID(for: mqtt)
            loaded.channels[name] = mqtt
        }
        let settings = loaded
        // The channels' own log lines (an e-mail server's refusal) pass the same redactor as their results.
        let redactor = SecretRedactor(secrets: settings.secrets)
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: .info, redactor: redactor) }
        if let channel, settings.channels[channel] == nil {
            printError("--channel: unknown channel '\(channel)' (configured: \(settings.channels.keys.sorted().joined(separator: ", ")))")
            throw ExitStatus.configError
        }
        let only = channel, everyone = allContacts
        let failures = try runBlocking {
            try await withChannelContext { context in
                let channels = try settings.makeChannels(context: context).filter { only == nil || $0.name == only }
                let mqtt = channels.compactMap { $0 as? MQTTChannel }
                mqtt.forEach { $0.start() }   // connects; a send waits for the connection
                let tests = TestAlert(settings: settings, allContacts: everyone).deliveries(for: channels.map(\.name))
                var failed = 0
                for (delivery, channel) in tests.flatMap({ d in channels.filter { $0.name == d.channel }.map { (d, $0) } }) {
                    let to = delivery.recipient.map { " to \($0.name)" } ?? ""
                    do {
                        let receipt = try await channel.send(delivery)
                        print("\(delivery.channel)\(to): sent (\(receipt.providerID.map { "\($0), " } ?? "")\(receipt.detail))")
                    } catch {
                        failed += 1
                        print("\(delivery.channel)\(to): FAILED (\(error))")
                    }
                    flushStandardOutput()
                }
                for m in mqtt { await m.stop() }
                return failed
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }
}
