@testable import FallGuardConfig
import FallGuardCore
import FallGuardEmail
import FallGuardHardware
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// One declared section type, checked without knowing its type.
private struct Declared: Sendable {
    let name: String
    let keyNames: [String]
    /// Keys left out of the schema while unset (a web password, a message body).
    let unsetLeftOut: Set<String>
    let secretNames: Set<String>
    /// The property each key sets, as Swift prints its key path (`\AlarmSection.alertTimeout`).
    let properties: [String]
    /// The default value encoded and decoded again equals the default.
    let roundTrips: @Sendable () throws -> Bool
    /// The keys the default value writes (its shape for the unknown-key check).
    let written: @Sendable () throws -> Set<String>

    init<T: KeyedSection & Equatable>(_ type: T.Type) {
        name = "\(T.self)"
        keyNames = T.keys.map(\.name)
        unsetLeftOut = Set(T.keys.filter { !$0.writtenWhenUnset }.map(\.name))
        secretNames = Set(T.keys.filter(\.isSecret).map(\.name))
        properties = T.keys.map { String(describing: $0.property) }
        roundTrips = {
            let data = try JSONEncoder().encode(Configured(T()))
            return try JSONDecoder().decode(Configured<T>.self, from: data).value == T()
        }
        written = {
            guard case let .mapping(m) = try keyShape(of: Configured(T())) else { return [] }
            return Set(m.compactMap { $0.key.string })
        }
    }
}

/// Every section type whose keys are declared with ``ConfigKey``.
private let declared: [Declared] = [
    Declared(SensorSection.self), Declared(DetectorSection.self), Declared(AlarmSection.self), Declared(OnOffPattern.self),
    Declared(GPIOSection.self), Declared(BuzzerWiring.self), Declared(ButtonWiring.self), Declared(LEDWiring.self),
    Declared(StateSection.self), Declared(RecordingSection.self), Declared(SpeechSection.self), Declared(MetricsSection.self),
    Declared(WebSection.self), Declared(LogSection.self), Declared(NotificationSettings.self), Declared(Recipient.self),
    Declared(Wearer.self), Declared(NotificationPolicy.self), Declared(AlertRoute.self), Declared(RetrySettings.self),
    Declared(MessageTemplates.self), Declared(TwilioSMSOptions.self), Declared(TwilioCallOptions.self),
    Declared(WebhookOptions.self), Declared(ExecOptions.self), Declared(ConsoleOptions.self),
    Declared(MQTTChannelSettings.self), Declared(EmailChannelSettings.self), Declared(ModemOptions.self), Declared(NtfyOptions.self),
]

@Suite("Each key declared once")
struct ConfigKeyTests {
    @Test func everyChannelTypeIsDeclaredWithItsKeys() {
        for (type, options) in ChannelTypes.all {
            #expect(declared.contains { $0.name == "\(options)" }, "channel type \(type)")
        }
    }

    @Test func noTwoKeysOfASectionShareAName() {
        for section in declared {
            let names = section.keyNames
            #expect(Set(names).count == names.count, "\(section.name): \(names)")
        }
    }

    /// Keys are named like their properties: `alert-timeout` is `alertTimeout`, `keep-gb` is
    /// `keepGB`. The message bodies (`templates.fall`, …) are named by their alert kind (a subscript).
    @Test func everyKeyIsNamedLikeItsProperty() {
        for section in declared {
            for (name, property) in zip(section.keyNames, section.properties) where !property.contains("<computed") {
                let last = property.split(separator: ".").last.map(String.init) ?? property
                #expect(kebabCase(last) == name, "\(section.name): key '\(name)' sets \(property)")
            }
        }
    }

    @Test func kebabCaseIsTheFilesSpelling() {
        #expect(kebabCase("alertTimeout") == "alert-timeout")
        #expect(kebabCase("keepGB") == "keep-gb")
        #expect(kebabCase("allowPlainHTTP") == "allow-plain-http")
        #expect(kebabCase("clientID") == "client-id")
        #expect(kebabCase("baseURL") == "base-url")
        #expect(kebabCase("countdown") == "countdown")
    }

    /// What is decoded is written back: every declared key, and the value survives the trip.
    @Test func everyDeclaredKeyRoundTrips() throws {
        for section in declared {
            #expect(try section.roundTrips(), "\(section.name)")
            let written = try section.written()
            let declaredNames = Set(section.keyNames)
            #expect(written.subtracting(declaredNames).sorted() == [], "\(section.name) writes undeclared keys")
            // Message bodies and web.password not set are left out (the example file need not show them).
            #expect(declaredNames.subtracting(written).subtracting(section.unsetLeftOut).sorted() == [], "\(section.name) leaves keys out")
        }
    }

    /// A key is read from the file and into the property it names, with a value other than its default.
    @Test func aKeyIsReadIntoItsProperty() throws {
        let a = try JSONDecoder().decode(AlarmSection.self, from: Data(#"{"alert-timeout": 600, "fault-grace": 5, "led-patterns": {"fault": {"count": 2}}}"#.utf8))
        #expect(a.alertTimeout == 600 && a.faultGrace == 5 && a.ledPatterns["fault"] == OnOffPattern(onMs: 0, count: 2))
        let engine = try a.alertConfiguration()
        #expect(engine.alertTimeout == 600 && engine.faultGrace == 5)
        // A route given in part keeps that route's own defaults.
        let p = try JSONDecoder().decode(Configured<NotificationPolicy>.self, from: Data(#"{"fall": {"deadline": 60}}"#.utf8)).value
        #expect(p.fall.deadline == 60 && p.fall.primary == AlertRoute.alarm.primary && p.fall.escalate)
        #expect(p.heartbeat == NotificationPolicy().heartbeat)
    }

    /// The engine's settings are named by the section's keys without a table.
    @Test func theEnginesSettingsAreNamedByTheirKeys() {
        for setting in AlertConfiguration.Setting.allCases {
            #expect(AlarmSection.keys.contains { $0.name == AlarmSection.key(setting) }, "\(setting)")
        }
    }

    @Test func secretKeysAreDeclaredSo() {
        var mqtt = MQTTChannelSettings(host: "broker.example", username: "u", password: "pw-123456")
        mqtt.acknowledgeSecret = "0123456789abcdef0123"
        #expect(Set(mqtt.secrets) == ["pw-123456", "0123456789abcdef0123"])
        #expect(EmailChannelSettings(host: "smtp.example", username: "u", password: "mail-pw").secrets == ["mail-pw"])
        #expect(WebSection.keys.filter(\.isSecret).map(\.name) == ["password"])
    }

    /// A key declared secret is one the file's redactor masks by its name too (in the text of
    /// the file, before any section reads it), and the other way round.
    @Test func theKeysDeclaredSecretAreTheSecretSoundingOnes() {
        for section in declared {
            let byName = Set(section.keyNames.filter(SecretRedactor.isSecretKey))
            #expect(section.secretNames == byName, "\(section.name)")
        }
    }

    private func load(_ yaml: String) -> (lines: [String], dir: TempDirectory) {
        let dir = TempDirectory("keys")
        let file = dir.write("config.yaml", yaml)
        let (_, diagnostics) = DaemonConfiguration.load(path: file, environment: [:])
        return (diagnostics.map { $0.description.replacingOccurrences(of: dir.path + "/", with: "") }, dir)
    }

    /// A declared range names the key and its line; `check-config` stops with 78.
    @Test func aValueOutsideItsDeclaredRangeNamesTheKeyWithFileAndLine() throws {
        let r = load("""
            log:
              level: info
            recording:
              keep-gb: 1
              flush-interval: 30
            """)
        #expect(r.lines.contains("config.yaml:5: recording.flush-interval: 30.0 s is outside 1.0...10.0 s"), "\(r.lines)")
        let checked = try fallguard(["check-config", "--no-hardware", "--config", r.dir.path + "/config.yaml"])
        #expect(checked.status == 78, "\(checked.stdout)\(checked.stderr)")
        #expect((checked.stdout + checked.stderr).contains("config.yaml:5: recording.flush-interval"))
    }

    /// An unknown key in a section, in a channel of its own module, and in a nested section,
    /// each with the closest declared key.
    @Test func anUnknownKeySuggestsTheNearestDeclaredOne() {
        let r = load("""
            alarm:
              alert-timout: 600
            gpio:
              buzzer: {tone-hzz: 2000}
            wearer: {name: W}
            contacts: [{name: A, email: a@example.org}]
            channels:
              mail: {type: email, host: smtp.example.org, from: b@example.org, conect-timeout: 5}
            policy:
              fall: {broadcast: [mail], primary: [], others: []}
              help-requested: {broadcast: [mail], primary: [], others: []}
              resolved: {broadcast: [mail], primary: [], others: []}
              device-problem: {broadcast: [mail], primary: [], others: []}
              heartbeat: {broadcast: [mail], primary: [], others: []}
            """)
        #expect(r.lines.contains("config.yaml:2: alarm.alert-timout: unknown key 'alert-timout' (did you mean 'alert-timeout'?)"), "\(r.lines)")
        #expect(r.lines.contains("config.yaml:4: gpio.buzzer.tone-hzz: unknown key 'tone-hzz' (did you mean 'tone-hz'?)"), "\(r.lines)")
        #expect(r.lines.contains { $0.hasPrefix("config.yaml:8: channels.mail.conect-timeout: unknown key 'conect-timeout' (did you mean 'connect-timeout'?)") }, "\(r.lines)")
    }

    /// Every key of every channel type is shown in the example file (configured or commented out).
    @Test func theExampleShowsEveryKeyOfEveryChannelType() throws {
        let text = try String(contentsOfFile: ExampleFileTests.example, encoding: .utf8)
        for section in declared where section.name.hasSuffix("Options") || section.name.hasSuffix("ChannelSettings") {
            for name in section.keyNames {
                #expect(text.contains(" \(name):"), "\(section.name): \(name)")
            }
        }
    }
}
