@testable import FallGuardConfig
import FallGuardCore
import FallGuardHardware
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport
import Yams

@Suite("deploy/fallguard.example.yaml")
struct ExampleFileTests {
    static let example = repositoryRoot + "/deploy/fallguard.example.yaml"
    /// The example reads the Twilio credentials from the environment, as a Pi would.
    static let environment = ["TWILIO_ACCOUNT_SID": "AC0", "TWILIO_AUTH_TOKEN": "t"]

    @Test func exampleLoadsWithoutAnyProblemAndStatesTheDefaults() throws {
        let (c, diagnostics) = DaemonConfiguration.load(path: Self.example, environment: Self.environment)
        #expect(diagnostics.map(\.description) == [])
        // The file documents the defaults: each section decodes to what an empty one gives,
        // but for the status LED, which the example wires.
        #expect(c.sensor == SensorSection())
        #expect(c.detector == DetectorSection())
        #expect(c.alarm == AlarmSection())
        var gpio = c.gpio
        #expect(gpio.wiring.led == LEDWiring(line: "GPIO27", activeLow: GPIOSection.ledActiveLowDefault))
        gpio.wiring.led = nil
        #expect(gpio == GPIOSection())
        #expect(c.state == StateSection())
        #expect(c.recording == RecordingSection())
        #expect(c.metrics == MetricsSection())
        #expect(c.log == LogSection())
        #expect(c.power == PowerSection())
        let notify = try #require(c.notify.settings)
        #expect(notify.policy == NotificationPolicy() && notify.templates == MessageTemplates())
    }

    /// Issue 28 item 8: the example with its `credentials-file:` line uncommented and a 0600
    /// credentials file beside it, as the README and docs/raspberry-pi.md say, loads without a
    /// problem; the file's values are in force and hidden (it used to fail with exit 78:
    /// `credentials-file: unknown key`).
    @Test func theExampleWithACredentialsFileBesideItLoads() throws {
        let dir = TempDirectory("creds")
        let text = try String(contentsOfFile: Self.example, encoding: .utf8)
        let line = "# credentials-file: /etc/fallguard/credentials.yaml"
        #expect(text.contains("\n" + line + "\n"), "the example shows the line")
        let config = dir.write("config.yaml", text.replacingOccurrences(of: line, with: "credentials-file: credentials.yaml"), mode: 0o640)
        _ = dir.write("credentials.yaml", """
            web:
              password: "a long passphrase 4711"
            channels:
              sms:
                auth-token: tok-from-the-credentials-file
            """, mode: 0o600)
        let (c, diagnostics) = DaemonConfiguration.load(path: config, environment: Self.environment)
        #expect(diagnostics.map(\.description) == [])
        #expect(c.web.password == "a long passphrase 4711")
        #expect(c.notify.settings?.secrets.contains("tok-from-the-credentials-file") == true)
        #expect(c.redactor.redact("auth tok-from-the-credentials-file, a long passphrase 4711") == "auth \(SecretRedactor.mask), \(SecretRedactor.mask)")
        let checked = try fallguard(["check-config", "--no-hardware", "--config", config], environment: Self.environment)
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
    }

    /// The field-test profile: loads without a problem, records, and keeps a few months.
    @Test func theFieldTestProfileRecordsAndLoadsWithoutAProblem() throws {
        let (c, diagnostics) = DaemonConfiguration.load(path: repositoryRoot + "/deploy/field-test.yaml", environment: Self.environment)
        #expect(diagnostics.map(\.description) == [])
        #expect(c.recording.enabled && c.recording.keepGB == 8 && c.recording.flushInterval <= 10)
        #expect(c.recording.folder(stateDirectory: c.stateDirectory) == StateSection.defaultDirectory + "/recordings")
        #expect(c.gpio.enabled && c.detector == DetectorSection())
    }

    /// Every key path of a tree: mapping keys joined by dots, list items as `*`.
    static func keyPaths(_ node: Node, _ prefix: [String] = []) -> Set<String> {
        switch node {
        case let .mapping(m):
            return m.reduce(into: Set<String>()) { paths, pair in
                guard let key = pair.key.string else { return }
                paths.insert((prefix + [key]).joined(separator: "."))
                paths.formUnion(keyPaths(pair.value, prefix + [key]))
            }
        case let .sequence(s):
            return s.reduce(into: Set<String>()) { $0.formUnion(keyPaths($1, prefix + ["*"])) }
        default:
            return []
        }
    }

    @Test func everyKeyOfTheExampleIsTheSchemasAndEverySchemaKeyIsInTheExample() throws {
        let text = try String(contentsOfFile: Self.example, encoding: .utf8)
        let inFile = Self.keyPaths(try #require(try Yams.compose(yaml: text)))
        let (c, _) = DaemonConfiguration.load(path: Self.example, environment: Self.environment)
        // The schema itself: every key the decoded file writes back (nil values as null).
        let inSchema = Self.keyPaths(try keyShape(of: Configured(c.file)))
        #expect(inFile.subtracting(inSchema).sorted() == [], "keys the schema does not know")
        #expect(inSchema.subtracting(inFile).sorted() == [], "keys the example does not show")
        for section in ["sensor", "detector", "alarm", "gpio", "state", "metrics", "log"] + NotifySections.keys {
            #expect(inFile.contains(section), "section \(section)")
        }
    }

    /// The channel types shown commented out (`  # webhook:` …), as the lines would read uncommented.
    static func commentedChannels(in text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "channels:") else { return "" }
        let block = lines[(start + 1)...].prefix { $0.hasPrefix("  ") }
        return block.filter { $0.hasPrefix("  # ") }.map { "  " + $0.dropFirst(4) }.joined(separator: "\n")
    }

    @Test func theCommentedChannelsUseOnlyKeysOfTheirTypes() throws {
        let text = try String(contentsOfFile: Self.example, encoding: .utf8)
        let yaml = Self.commentedChannels(in: text)
        let node = try #require(try Yams.compose(yaml: "channels:\n" + yaml))
        let channels = try #require(node.value(at: ["channels"])?.mapping)
        var types: [String] = []
        for pair in channels {
            let name = try #require(pair.key.string)
            let entry = try YAMLDecoder().decode(Configured<ChannelEntry>.self, from: pair.value).value
            types.append(ChannelTypes.type(of: entry.options) ?? "unknown")
            let unknown = Self.keyPaths(pair.value).subtracting(Self.keyPaths(try keyShape(of: Configured(entry))))
            #expect(unknown.sorted() == [], "channels.\(name)")
        }
        // With the two the example configures, every type of the build is shown.
        #expect(Set(types + ["twilio-sms", "twilio-call"]) == Set(ChannelTypes.all.map(\.type)))
    }

    /// Issue 30: the station's example loads without a problem (its secrets from the
    /// environment, as the unit gives them), states the defaults, and check-config takes it.
    @Test func theStationsExampleLoadsAndChecks() throws {
        let example = repositoryRoot + "/deploy/fallguard-station.example.yaml"
        let environment = ["FALLGUARD_ACK_SECRET": "one-secret-for-the-home-0123", "ANNA_PASSWORD": "anna-password",
                           "BEN_PASSWORD": "ben-password"]
        let (c, diagnostics) = StationConfiguration.load(path: example, environment: environment)
        #expect(diagnostics.map(\.description) == [])
        #expect(c.station.broker == StationSection.Broker() && c.station.listen == StationSection().listen)
        #expect(c.station.stateDirectory == StationSection.defaultStateDirectory && c.station.historyDays == 7 && c.station.sessionHours == 12)
        #expect(c.station.staff.map(\.name) == ["Anna Smith", "Ben Okafor"] && c.station.residents["room-012"]?.wearer == "Margaret")
        let checked = try fallguard(["check-config", "--config", example], environment: environment)
        #expect(checked.status == 0 && checked.stdout.contains("OK, a station's file"), "\(checked.stdout)\(checked.stderr)")
    }
}
