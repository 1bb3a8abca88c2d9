@testable import FallGuardConfig
import FallGuardConfigKeys
import FallGuardCore
import FallGuardEmail
import FallGuardHardware
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// A check names the key it is about through the key's declaration (`Self.at(path, \.uri)`),
/// never by typing the key's name again: renaming a key cannot leave a check at the old name.
@Suite("Checks name declared keys")
struct CheckPathTests {
    /// Every problem of a section with every check failing, and the section's declared names.
    private static func problems<S: KeyedSection>(_ section: S) -> (problems: [ConfigProblem], names: [String]) {
        (section.problems(at: []), S.keyNames)
    }

    /// Sections with every value a check refuses.
    private static var wrongSections: [(name: String, problems: [ConfigProblem], names: [String], atLeast: Int)] {
        var sensor = SensorSection()
        (sensor.uri, sensor.device, sensor.mountMatrix, sensor.cpu, sensor.replay) = ("bogus", "", [[1]], .number(-1), "/nonexistent/r.csv")
        var web = WebSection()
        (web.password, web.tlsCertificate) = ("short", "/nonexistent/cert.pem")
        var speech = SpeechSection()
        (speech.settings.voice, speech.settings.device, speech.settings.helpComing) = ("-x", "two words", String(repeating: "a", count: 301))
        var detector = DetectorSection()
        detector.name = "no-such-detector"
        var detectorSettings = DetectorSection()
        detectorSettings.settings = ["no-such-setting": 1]
        var state = StateSection()
        state.directory = "relative"
        var drain = StateSection()
        drain.drainOnStop = 100
        var power = PowerSection()
        (power.batteryLow, power.batteryCritical, power.root) = (200, 300, "relative")
        var gpio = GPIOSection()
        (gpio.wiring.chip, gpio.wiring.consumer, gpio.wiring.buzzer.line, gpio.wiring.buzzer.pwmChannel) = ("", "", "", -1)
        gpio.wiring.buzzer.pwmChip = -1
        gpio.wiring.led = LEDWiring(line: gpio.wiring.button.line, activeLow: false)
        var passive = GPIOSection()
        (passive.wiring.buzzer.type, passive.wiring.buzzer.toneHz) = (.passive, 1)
        var metrics = MetricsSection()
        metrics.listen = "nowhere"
        var recording = RecordingSection()
        recording.directory = "relative"
        var alarm = AlarmSection()
        (alarm.countdown, alarm.notWornAlert) = (1, 200)
        (alarm.patterns, alarm.ledPatterns) = (["no-sound": OnOffPattern(onMs: 1)], ["no-state": OnOffPattern(onMs: 1)])
        var mqtt = MQTTChannelSettings(host: " ", username: "u")
        (mqtt.clientID, mqtt.topicPrefix, mqtt.reconnectDelayMax, mqtt.certFile, mqtt.caFile) = ("", "a/+", 0, "/nonexistent/c", "/nonexistent/ca")
        (mqtt.acknowledgeSecret, mqtt.acknowledgeMode, mqtt.device) = ("short", .token, "a/b")
        var email = EmailChannelSettings(host: "a b", security: .none)
        (email.password, email.from, email.fromName, email.caFile) = ("pw", "not-an-address", "a\nb", "/nonexistent/ca")
        var sms = TwilioSMSOptions()
        (sms.readReplies, sms.acknowledgeWords, sms.account.baseURL) = (true, [], "http://twilio.example")
        var modem = ModemOptions()
        (modem.manager.mmcli, modem.readReplies, modem.acknowledgeWords) = ("/nonexistent/mmcli", true, [])
        var webhook = WebhookOptions(url: "ftp://x")
        webhook.headers = ["bad name": "a\u{1}"]
        var retry = RetrySettings()
        (retry.initial, retry.max) = (10, 1)
        var policy = NotificationPolicy()
        policy.heartbeatAt = "25:99"
        var templates = MessageTemplates()
        templates.bodies[.fall] = "{nope}"
        var station = StationSection()
        (station.broker.host, station.broker.username, station.broker.topicPrefix) = ("broker.example", "u", "a/#")
        (station.stateDirectory, station.displayKey, station.siteKey, station.acknowledgeSecret) = ("relative", "short", "short", "short")
        station.acknowledgeSecrets = ["bridge": "short"]
        var member = StationSection.Staff()
        (member.user, member.name, member.password, member.pin) = ("two words", "", "short", "12")
        station.staff = [member, member]
        var shift = StationSection.Shift()
        (shift.from, shift.to, shift.floors) = ("08:00", "08:00", ["nobody": ["9"]])
        station.shifts = [shift]
        var onCall = StationSection.OnCall()
        onCall.channels = ["no-such-channel"]
        (station.escalation.onCall, station.escalation.senior, station.escalation.escalateAgainAfter) = (onCall, onCall, 5)
        var stationTLS = StationSection()
        (stationTLS.listen, stationTLS.tlsKey, stationTLS.allowPlainHTTP) = ("0.0.0.0:8470", "/nonexistent/key", true)
        let cases: [(String, (problems: [ConfigProblem], names: [String]), Int)] = [
            ("sensor", problems(sensor), 5), ("web", problems(web), 3), ("speech", problems(speech), 3),
            ("detector", problems(detector), 1), ("detector settings", problems(detectorSettings), 1),
            ("state", problems(state), 1), ("drain", problems(drain), 1), ("power", problems(power), 4),
            ("gpio", problems(gpio), 6), ("passive buzzer", problems(passive), 1), ("metrics", problems(metrics), 1),
            ("recording", problems(recording), 1), ("alarm", problems(alarm), 4), ("mqtt", problems(mqtt), 10),
            ("email", problems(email), 6), ("twilio-sms", problems(sms), 5), ("twilio-call", problems(TwilioCallOptions()), 3),
            ("modem", problems(modem), 2), ("webhook", problems(webhook), 3), ("exec", problems(ExecOptions(command: [])), 1),
            ("exec program", problems(ExecOptions(command: ["/nonexistent/program"])), 1), ("retry", problems(retry), 1),
            ("policy", problems(policy), 1), ("templates", problems(templates), 1), ("recipient", problems(Recipient(name: "", phone: "1")), 2),
            ("wearer", problems(Wearer(name: "")), 1), ("station", problems(station), 20), ("station tls", problems(stationTLS), 3),
        ]
        return cases.map { (name: $0.0, problems: $0.1.problems, names: $0.1.names, atLeast: $0.2) }
    }

    /// Each check's problem is at a key its section declares (an undeclared property would
    /// show as ``undeclaredMark``), and every check above did find its problems.
    @Test func everyCheckNamesAKeyItsSectionDeclares() {
        for section in Self.wrongSections {
            #expect(section.problems.count >= section.atLeast, "\(section.name): \(section.problems)")
            for problem in section.problems {
                #expect(!problem.keyPath.contains { $0.hasPrefix(undeclaredMark) }, "\(section.name): \(problem)")
                if let first = problem.keyPath.first {
                    #expect(section.names.contains(first), "\(section.name): \(problem) names no declared key")
                }
            }
        }
    }

    /// The notifier sections' checks across sections: channels, fallbacks, routes, contacts.
    @Test func theNotifierChecksNameDeclaredKeys() {
        let (_, diagnostics) = DaemonConfiguration.load(yaml: """
            device: "a\\u0001"
            wearer: {name: W, location-channels: [nowhere]}
            contacts: [{name: A, email: a@example.org}]
            channels:
              sms: {type: twilio-sms, account-sid: AC1, auth-token: t, from: "+15005550006", fallback: sms}
              mail: {type: email, host: smtp.example.org, from: b@example.org}
              bad: {type: no-such-type}
            policy:
              fall: {primary: [sms, mail, ghost], broadcast: [mail]}
              help-requested: {primary: [], others: [], broadcast: []}
            """, path: "notify.yaml", environment: [:])
        let lines = diagnostics.map(\.description)
        for expected in ["wearer.location-channels: unknown channel 'nowhere'", "channels.sms.fallback: a channel cannot be its own fallback",
                         "channels.bad.type:", "policy.fall.primary.2: unknown channel 'ghost'",
                         "policy.fall.broadcast.0: channel 'mail' sends to a contact", "contacts.0.phone: missing",
                         "policy.help-requested: lists no channel", "device: contains the control character"] {
            #expect(lines.contains { $0.contains(expected) }, "\(expected) in \(lines)")
        }
        #expect(!lines.contains { $0.contains(undeclaredMark) }, "\(lines)")
    }

    /// The mechanism itself: a declared property gives its key, nested sections their path, a
    /// property no key sets gives the mark the test above looks for.
    @Test func aKeyPathGivesItsDeclaredName() {
        #expect(AlarmSection.declaredName(of: \.alertTimeout) == "alert-timeout")
        #expect(SensorSection.at(["sensor"], \.mountMatrix) == ["sensor", "mount-matrix"])
        #expect(GPIOSection.at(["gpio"], \.wiring.buzzer, \.toneHz) == ["gpio", "buzzer", "tone-hz"])
        #expect(TwilioSMSOptions.at([], \.account.authToken) == ["auth-token"])
        #expect(MessageTemplates.at([], \.bodies[.helpRequested]) == ["help-requested"])
        #expect(AlarmSection.declaredName(of: \.buttonTimings) == nil)
        #expect(AlarmSection.at(["alarm"], \.buttonTimings).last?.hasPrefix(undeclaredMark) == true)
    }

    /// No check types a key's name: a string literal after `path +` in the sections' sources
    /// would be a second spelling of a declared key.
    @Test func noCheckTypesAKeyName() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let modules = ["FallGuardConfig", "FallGuardConfigKeys", "FallGuardNotify", "FallGuardMQTT", "FallGuardEmail"]
        var found: [String] = []
        for module in modules {
            let dir = root.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(atPath: dir.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
            #expect(!files.isEmpty, "\(module)")
            for file in files {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("path + [\"") || line.contains("problem([\"") || line.contains("problem(\"") {
                    found.append("\(module)/\(file):\(i + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found == [], "\(found.joined(separator: "\n"))")
    }
}
