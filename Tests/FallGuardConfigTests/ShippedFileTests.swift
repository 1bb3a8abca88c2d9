@testable import FallGuardConfig
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// deploy/fallguard.yaml, the /etc/fallguard/config.yaml that install.sh and the .deb install
/// (issue 39 item 2): as shipped it names no channel, so it starts and protects locally and says
/// that nobody will be told; each of its commented ways to tell someone, turned on as its
/// comments say (delete the "#" of the setting lines), loads without an error; a configured
/// channel that is broken is still an error (exit 78).
@Suite("deploy/fallguard.yaml, the shipped configuration")
struct ShippedFileTests {
    static let shipped = repositoryRoot + "/deploy/fallguard.yaml"
    /// The secrets of B, C and D, each in a credentials file as the shipped file's comments say
    /// (only the channels the file configures: a name there that the file lacks is a channel
    /// without a type).
    static let credentials = [
        "3B": "channels:\n  mail: {password: \"smtp-password\"}\n",
        "3C": "channels:\n  home: {password: \"mqtt-password\", acknowledge-secret: \"0123456789abcdef0123\"}\n",
        "3D": "channels:\n  sms: {account-sid: \"AC0\", auth-token: \"token\"}\n  call: {account-sid: \"AC0\", auth-token: \"token\"}\n",
    ]

    /// The file with the setting lines of the blocks whose titles start with `blocks` turned
    /// on: a line `#` followed by YAML (no space, or the indentation of a nested key) loses its
    /// `#`; comments (`# ...`) stay.
    static func turningOn(_ blocks: [String]) throws -> String {
        let text = try String(contentsOfFile: shipped, encoding: .utf8)
        var on = false
        var found: Set<String> = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            if line.hasPrefix("# ---- ") {
                let title = line.dropFirst("# ---- ".count)
                on = blocks.contains { title.hasPrefix($0 + ". ") }
                if on { found.insert(String(title.prefix { $0 != "." })) }
                return line
            }
            guard on, line.hasPrefix("#"), let second = line.dropFirst().first, second != "#" else { return line }
            let rest = line.dropFirst()
            let indent = rest.prefix { $0 == " " }.count
            return indent % 2 == 0 && indent != 1 ? rest : line
        }
        #expect(found == Set(blocks), "blocks \(blocks) in the file")
        return lines.joined(separator: "\n")
    }

    func load(_ text: String) -> (DaemonConfiguration, [ConfigDiagnostic]) {
        DaemonConfiguration.load(yaml: text, path: "/etc/fallguard/config.yaml", environment: [:])
    }

    /// `text` with its `credentials-file:` line turned on, naming a 0600 file with the secrets.
    static func withCredentials(_ text: String, _ secrets: String, in dir: TempDirectory) -> String {
        let line = "#credentials-file: /etc/fallguard/credentials.yaml"
        #expect(text.contains("\n" + line + "\n"), "the shipped file shows the line")
        let file = dir.write("credentials.yaml", secrets, mode: 0o600)
        return text.replacingOccurrences(of: line, with: "credentials-file: " + file)
    }

    @Test func asShippedItLoadsWithOneWarningNobodyWillBeTold() throws {
        let (c, diagnostics) = DaemonConfiguration.load(path: Self.shipped, environment: [:])
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(c.notify.nobodyWillBeTold)
        #expect(c.nobodyWillBeToldWarning?.description == "\(Self.shipped): warning: channels: \(NotifySections.nobodyWillBeToldMessage)")
        #expect(c.notify.effective.channels.values.allSatisfy { $0 is ConsoleOptions }, "alerts go to the journal")
        // It protects locally: the sensor, the buzzer, the button and the LED of the docs' wiring.
        #expect(c.gpio.enabled && c.gpio.wiring.buzzer.line == "GPIO18" && c.gpio.wiring.button.line == "GPIO17")
        #expect(c.gpio.wiring.led?.line == "GPIO27")
        #expect(c.sensor.replay == nil && c.metrics.enabled && c.web.enabled)
    }

    /// Who wears it and whom to tell, but no channel yet: the same warning, no error (the
    /// default policy's `sms` and `call` are not "unknown channels"), the wearer's name kept.
    @Test func aWearerAndContactsWithoutAChannelStillOnlyWarn() throws {
        let (c, diagnostics) = load(try Self.turningOn(["1", "2"]))
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(c.notify.nobodyWillBeTold && c.nobodyWillBeToldWarning != nil && c.notify.effective.wearer.name == "Margaret")
    }

    /// A policy written for channels that are not there is a mistake, not "unconfigured".
    @Test func aPolicyNamingChannelsThatAreNotThereIsAnError() throws {
        let text = try Self.turningOn(["1"]) + "\npolicy:\n  fall: {primary: [], others: [], broadcast: [phone]}\n"
        let (_, diagnostics) = load(text)
        #expect(diagnostics.contains { $0.isError && $0.problem.message.contains("unknown channel 'phone'") }, "\(diagnostics)")
    }

    @Test(arguments: [("3A", "webhook"), ("3B", "email"), ("3C", "mqtt"), ("3D", "twilio-sms")])
    func eachWayToTellSomeoneTurnedOnLoadsWithoutAnError(block: String, type: String) throws {
        let dir = TempDirectory("shipped")
        let text = try Self.turningOn(["1", "2", block])
        let (c, diagnostics) = withExtendedLifetime(dir) { load(Self.credentials[block].map { Self.withCredentials(text, $0, in: dir) } ?? text) }
        #expect(!diagnostics.contains { $0.isError }, "\(block): \(diagnostics)")
        #expect(!c.notify.nobodyWillBeTold && c.nobodyWillBeToldWarning == nil)
        let settings = try #require(c.notify.settings)
        #expect(settings.channels.values.contains { ChannelTypes.type(of: $0) == type }, "\(block)")
        #expect(!settings.policy.fall.primary.isEmpty || !settings.policy.fall.broadcast.isEmpty)
    }

    /// The account-free ways come first, Twilio last and marked as paid.
    @Test func theWaysWithoutAnAccountComeFirst() throws {
        let text = try String(contentsOfFile: Self.shipped, encoding: .utf8)
        let titles = text.split(separator: "\n").filter { $0.hasPrefix("# ---- 3") }
        #expect(titles.count == 4 && titles[0].contains("no account") && titles[3].contains("PAID Twilio account"), "\(titles)")
    }

    /// check-config: the shipped file exits 0 with the warning; a configured channel whose
    /// secret is not set exits 78, as `run` does.
    @Test func checkConfigPassesTheShippedFileAndRefusesABrokenChannel() throws {
        let ok = try fallguard(["check-config", "--no-hardware", "--config", Self.shipped])
        #expect(ok.status == 0 && ok.stdout.contains("OK (1 warning)"), "\(ok.stdout)\(ok.stderr)")
        #expect(ok.stderr.contains("warning: channels: no channel: nobody will be told"), "\(ok.stderr)")
        let dir = TempDirectory("shipped")
        let broken = dir.write("config.yaml", try Self.turningOn(["1", "2", "3D"]), mode: 0o640)
        // Twilio turned on, its secrets not given: configured but broken.
        let refused = try fallguard(["check-config", "--no-hardware", "--config", broken])
        #expect(refused.status == 78 && refused.stderr.contains("channels.sms.auth-token"), "\(refused.stdout)\(refused.stderr)")
        let run = try fallguard(["run", "--config", broken, "--state", dir.path + "/state", "--duration", "1"])
        #expect(run.status == 78, "\(run.stderr)")
        let alert = try fallguard(["test-alert", "--config", Self.shipped])
        #expect(alert.status == 78 && alert.stderr.contains("no channel configured"), "\(alert.stderr)")
    }
}
