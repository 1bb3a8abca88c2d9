@testable import FallGuardConfig
import FallGuardCore
import FallGuardEmail
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// A value read as the loader reads it, from JSON (YAML's subset) with the file's keys.
func decodeSection<T: ConfigSection>(_ type: T.Type, _ json: String) throws -> T {
    try JSONDecoder().decode(Configured<T>.self, from: Data(json.utf8)).value
}

/// The keys a value writes back (the loader's unknown-key check), as JSON.
func encodeSection<T: ConfigSection>(_ value: T, sorted: Bool = false) throws -> Data {
    let e = JSONEncoder()
    if sorted { e.outputFormatting = .sortedKeys }
    return try e.encode(Configured(value))
}

// The notifier sections (moved here from FallGuardNotifyTests with the keys they test).
@Suite struct NotificationSectionsTests {
    static let minimal = """
        {"wearer": {"name": "Margaret"},
         "contacts": [{"name": "Anna", "phone": "+447700900001"}, {"name": "Ben", "phone": "+447700900002"}],
         "channels": {
           "sms": {"type": "twilio-sms", "account-sid": "AC1", "auth-token": "tok", "from": "+15005550006"},
           "call": {"type": "twilio-call", "account-sid": "AC1", "auth-token": "tok", "from": "+15005550006", "repeat": 2}
         }}
        """

    func decode(_ json: String) throws -> NotificationSettings { try decodeSection(NotificationSettings.self, json) }

    @Test func twilioChannelsFollowCallsAndReadRepliesByDefaultWithCheckedIntervals() throws {
        let s = try decode(Self.minimal)
        let sms = try #require(s.channels["sms"] as? TwilioSMSOptions)
        let call = try #require(s.channels["call"] as? TwilioCallOptions)
        #expect(sms.readReplies && sms.replyPollInterval == 10 && sms.acknowledgeWords == ["ok", "yes", "coming", "1"])
        #expect(call.followCalls && call.callPollInterval == 5 && call.machineDetection)
        let tuned = try decode(Self.minimal
            .replacingOccurrences(of: #""from": "+15005550006"}"#, with: #""from": "+15005550006", "reply-poll-interval": 1, "acknowledge-words": ["", "!"]}"#)
            .replacingOccurrences(of: #""repeat": 2}"#, with: #""repeat": 2, "call-poll-interval": 0.5, "machine-detection": false}"#))
        let problems = tuned.errors.map { "\($0)" }.joined(separator: "\n")
        #expect(problems.contains("reply-poll-interval") && problems.contains("1.0 s is outside 2.0...300.0 s"), "\(problems)")
        #expect(problems.contains("acknowledge-words") && problems.contains("call-poll-interval"), "\(problems)")
        #expect((tuned.channels["call"] as? TwilioCallOptions)?.machineDetection == false)
    }

    @Test func minimalSettingsGetTheThesisDefaults() throws {
        let s = try decode(Self.minimal)
        #expect(s.errors.isEmpty, "\(s.errors)")
        #expect(s.device == "fallguard" && s.wearer.location == "")
        #expect(s.policy.fall.primary == ["sms", "call"] && s.policy.fall.others == ["sms"] && s.policy.fall.escalate)
        #expect(s.policy.helpRequested == s.policy.fall)
        #expect(s.policy.resolved.escalate == false && s.policy.heartbeat.primary == ["sms"])
        #expect(s.policy.acknowledgeWithin == 300 && s.policy.heartbeatTime?.minuteOfDay == 9 * 60)
        let call = try #require(s.channels["call"] as? TwilioCallOptions)
        #expect(call.repeat == 2 && call.account.baseURL == "https://api.twilio.com" && call.language == "en-GB")
    }

    @Test func aPartialRouteKeepsTheOtherDefaults() throws {
        let json = Self.minimal.replacingOccurrences(of: "\"channels\"", with: "\"policy\": {\"fall\": {\"deadline\": 900}}, \"channels\"")
        let s = try decode(json)
        #expect(s.policy.fall.deadline == 900 && s.policy.fall.primary == ["sms", "call"])
    }

    @Test func everyKeyRoundTrips() throws {
        let s = try decode(Self.minimal)
        let once = try encodeSection(s, sorted: true)
        let twice = try encodeSection(try decodeSection(NotificationSettings.self, String(decoding: once, as: UTF8.self)), sorted: true)
        #expect(once == twice)
        let text = String(decoding: once, as: UTF8.self)
        for key in ["\"account-sid\"", "\"auth-token\"", "\"base-url\"", "\"repeat\"", "\"type\":\"twilio-call\"",
                    "\"acknowledge-within\"", "\"help-requested\"", "\"sms-limit\""] {
            #expect(text.contains(key), "\(key)")
        }
    }

    @Test func problemsNameTheKey() throws {
        let json = """
            {"wearer": {"name": "Margaret"},
             "contacts": [{"name": "Anna", "phone": "07700 900001"}, {"name": "Ben", "email": "ben@example.org"}],
             "channels": {
               "sms": {"type": "twilio-sms", "account-sid": "AC1", "from": "+15005550006"},
               "call": {"type": "twilio-call", "account-sid": "AC1", "auth-token": "t", "from": "+15005550006", "base-url": "ftp://x"},
               "hook": {"type": "webhook", "url": "not a url"},
               "mq": {"type": "mqtt", "keepalive": 1},
               "odd": {"type": "carrier-pigeon"}
             },
             "policy": {"fall": {"broadcast": ["hook", "pager"]}, "heartbeat-at": "9am"}}
            """
        let keys = Set(try decode(json).errors.map(\.key))
        for expected in ["contacts.0.phone", "channels.sms.auth-token", "channels.call.base-url", "channels.hook.url",
                         "channels.mq.keepalive", "channels.odd.type", "policy.fall.broadcast.1", "policy.heartbeat-at",
                         "contacts.1.phone"] {
            #expect(keys.contains(expected), "\(expected) in \(keys.sorted())")
        }
        let problems = try decode(json).errors
        #expect(problems.first { $0.key == "policy.fall.broadcast.1" }?.message.contains("unknown channel 'pager'") == true)
        #expect(problems.first { $0.key == "channels.odd.type" }?.message
            == "expected one of twilio-sms, twilio-call, webhook, exec, console, mqtt, email, modem, ntfy, found 'carrier-pigeon'")
    }

    @Test func aChannelInTheWrongListIsReported() throws {
        let json = Self.minimal.replacingOccurrences(of: "\"channels\"", with: "\"policy\": {\"fall\": {\"broadcast\": [\"sms\"]}}, \"channels\"")
        #expect(try decode(json).errors.map(\.key) == ["policy.fall.broadcast.0"])
    }

    @Test func everyChannelTypeIsListedOnceAndNamesItsOptions() {
        #expect(ChannelTypes.all.map(\.type) == ["twilio-sms", "twilio-call", "webhook", "exec", "console", "mqtt", "email", "modem", "ntfy"])
        #expect(ChannelTypes.type(of: ModemOptions()) == "modem")
        #expect(ChannelTypes.type(of: ConsoleOptions()) == "console")
        #expect(ChannelTypes.type(of: MQTTChannelSettings()) == "mqtt")
    }

    @Test func e164() {
        for good in ["+447700900123", "+15005550006", "+4930123456"] { #expect(ConfigCheck.isE164(good), "\(good)") }
        for bad in ["447700900123", "+44 7700 900123", "+0447700900", "+1234567", "+1234567890123456", "+44770090012a", ""] {
            #expect(!ConfigCheck.isE164(bad), "\(bad)")
        }
    }

    @Test func execChecksItsProgram() {
        #expect(ExecOptions(command: ["/bin/cat"]).problems(at: ["c"]).isEmpty)
        #expect(ExecOptions(command: ["cat"]).problems(at: ["c"]).isEmpty)
        #expect(ExecOptions(command: ["/nonexistent/page-nurse"]).problems(at: ["c"]).map(\.key) == ["c.command.0"])
        #expect(ExecOptions(command: []).problems(at: ["c"]).map(\.key) == ["c.command"])
    }

    @Test func templatesOverrideAndUnknownPlaceholdersAreReported() throws {
        let t = try decodeSection(MessageTemplates.self, #"{"fall": "{wearer} fell ({incident}) {mood}"}"#)
        #expect(t.bodies == [.fall: "{wearer} fell ({incident}) {mood}"] && t.smsLimit == 306)
        #expect(t.problems(at: ["templates"]).map(\.key) == ["templates.fall"])
    }

    @Test func webhookBodiesAreWords() throws {
        #expect(try decodeSection(WebhookOptions.self, #"{"url": "https://x.org", "body": "text"}"#).body == .text)
        #expect(try decodeSection(WebhookOptions.self, #"{"url": "https://x.org"}"#) == WebhookOptions(url: "https://x.org"))
        #expect(throws: DecodingError.self) { try decodeSection(WebhookOptions.self, #"{"body": "xml"}"#) }
    }
}

// The MQTT and e-mail channels' keys (moved here from FallGuardMQTTTests and FallGuardEmailTests).
@Suite struct ChannelSectionTests {
    @Test func mqttMissingKeysGetTheDocumentedDefaults() throws {
        let s = try decodeSection(MQTTChannelSettings.self, "{}")
        #expect(s == MQTTChannelSettings())
        #expect(s.host == "localhost" && s.effectivePort == 1883 && s.topicPrefix == "fallguard")
        #expect(s.discovery && s.discoveryPrefix == "homeassistant" && s.keepalive == 8 && s.publishTimeout == 10)
        #expect(s.reconnectDelay == 1 && s.reconnectDelayMax == 4, "issue 37: back within 5 s of the broker's return")
        #expect(s.acknowledgeMode == .hmac, "HMAC is the default")
        // A local broker without a secret: a warning (issue 28 item 10), not an error.
        // Without a top-level device: (issue 30), the channel is named by the hostname: warned too.
        #expect(s.problems(at: ["channels", "mqtt"]).map(\.key) == ["channels.mqtt", "channels.mqtt.acknowledge-secret"])
        #expect(s.problems(at: ["channels", "mqtt"]).allSatisfy { $0.severity == .warning })
        #expect(try decodeSection(MQTTChannelSettings.self, #"{"tls": true}"#).effectivePort == 8883)
    }

    @Test func mqttKebabCaseKeysSurviveARoundTrip() throws {
        let json = #"{"host":"broker.lan","port":1884,"username":"u","password":"p","device":"flat-3","client-id":"c","topic-prefix":"care/home-1","discovery":false,"discovery-prefix":"ha","keepalive":60,"publish-timeout":2.5,"reconnect-delay":2,"reconnect-delay-max":30,"tls":true,"ca-file":"/etc/hostname","acknowledge-secret":"0123456789abcdef"}"#
        let s = try decodeSection(MQTTChannelSettings.self, json)
        #expect(s.topicPrefix == "care/home-1" && s.clientID == "c" && s.publishTimeout == 2.5 && s.caFile == "/etc/hostname")
        let again = try decodeSection(MQTTChannelSettings.self, String(decoding: try encodeSection(s), as: UTF8.self))
        #expect(again == s)
        // Defaults encode every key too (nil ones as null), so none looks unknown to the loader.
        let keys = try #require(try JSONSerialization.jsonObject(with: encodeSection(MQTTChannelSettings())) as? [String: Any]).keys
        #expect(Set(keys) == ["host", "port", "username", "password", "device", "client-id", "topic-prefix", "discovery",
                              "discovery-prefix", "keepalive", "publish-timeout", "reconnect-delay", "reconnect-delay-max",
                              "tls", "allow-plaintext", "ca-file", "cert-file", "key-file", "acknowledge-secret", "acknowledge-mode"])
        // The channel's own device is a deprecated alias of the top-level device: (issue 30).
        #expect(s.problems(at: ["channels", "mqtt"]).map(\.key) == ["channels.mqtt.device"])
        #expect(s.problems(at: ["channels", "mqtt"]).allSatisfy { $0.severity == .warning })
    }

    @Test func mqttProblemsNameTheirKeys() throws {
        let s = MQTTChannelSettings(host: " ", port: 70_000, username: "u", device: "a/b", topicPrefix: "fallguard/#",
                                    keepalive: 1, publishTimeout: .infinity, reconnectDelay: 5, reconnectDelayMax: 2,
                                    tls: false, caFile: "/nonexistent/ca.pem", certFile: "/etc/hostname")
        let problems = s.problems(at: ["channels", "home"])
        let keys = Set(problems.map(\.key))
        for key in ["host", "port", "password", "device", "topic-prefix", "keepalive", "publish-timeout",
                    "reconnect-delay-max", "key-file", "ca-file", "cert-file"] {
            #expect(keys.contains("channels.home.\(key)"), "\(key): \(problems)")
        }
        #expect(problems.contains { $0.key == "channels.home.ca-file" && $0.message.contains("/nonexistent/ca.pem") && $0.severity == .warning },
                "a missing TLS file is not a configuration error: it must not keep the alarm from starting")
        #expect(problems.contains { $0.key == "channels.home.cert-file" && $0.severity == .warning })
    }

    /// Without an acknowledge-secret, whoever may publish on the ack topic can silence a fall
    /// alarm: only a broker on this machine, or one behind TLS with a login, is accepted.
    @Test func mqttAcknowledgementsMustBeAuthenticatedBeyondThisMachine() {
        func problem(_ s: MQTTChannelSettings) -> ConfigProblem? {
            s.problems(at: ["channels", "mqtt"]).first { $0.key == "channels.mqtt.acknowledge-secret" }
        }
        // Issue 28 item 10: a local broker without a secret lets any local program read the
        // retained incident and silence it: check-config says so.
        for host in ["localhost", "127.0.0.1", "::1"] {
            let local = problem(MQTTChannelSettings(host: host, device: "hall"))
            #expect(local?.severity == .warning && local?.message.contains("any program on this machine") == true, "\(String(describing: local))")
        }
        let open = problem(MQTTChannelSettings(host: "broker.lan", device: "hall"))
        #expect(open?.severity == .error && open?.message.contains("fallguard/hall/ack") == true, "\(String(describing: open))")
        #expect(problem(MQTTChannelSettings(host: "broker.lan", tls: true))?.severity == .error, "TLS without a login")
        let login = problem(MQTTChannelSettings(host: "broker.lan", username: "u", password: "p", tls: true))
        #expect(login?.severity == .warning && login?.message.contains("access rules") == true)
        #expect(problem(MQTTChannelSettings(host: "broker.lan", acknowledgeSecret: "0123456789abcdef")) == nil)
        #expect(problem(MQTTChannelSettings(host: "127.0.0.1", acknowledgeSecret: "short"))?.severity == .error)
    }

    /// Issue 28 item 9: `acknowledge-mode: token` (the secret itself on the ack topic) only over
    /// TLS or to a broker on this machine, and check-config says what it costs; HMAC is the default.
    @Test func tokenAcknowledgementsOnlyOverTLSOrToALocalBroker() throws {
        func problem(_ s: MQTTChannelSettings) -> ConfigProblem? {
            s.problems(at: ["channels", "mqtt"]).first { $0.key == "channels.mqtt.acknowledge-mode" }
        }
        func token(_ s: MQTTChannelSettings) -> MQTTChannelSettings { var t = s; t.acknowledgeMode = .token; return t }
        let secret = "0123456789abcdef"
        #expect(problem(MQTTChannelSettings(host: "broker.lan", acknowledgeSecret: secret)) == nil, "hmac: nothing to say")
        let clear = problem(token(MQTTChannelSettings(host: "broker.lan", acknowledgeSecret: secret)))
        #expect(clear?.severity == .error && clear?.message.contains("in clear") == true, "\(String(describing: clear))")
        #expect(problem(token(MQTTChannelSettings(host: "broker.lan", tls: true, acknowledgeSecret: secret)))?.severity == .warning)
        #expect(problem(token(MQTTChannelSettings(host: "127.0.0.1", acknowledgeSecret: secret)))?.severity == .warning)
        let decoded = try decodeSection(MQTTChannelSettings.self, #"{"host": "127.0.0.1", "acknowledge-mode": "token", "acknowledge-secret": "0123456789abcdef"}"#)
        #expect(decoded.acknowledgeMode == .token)
        #expect(throws: (any Error).self) { try decodeSection(MQTTChannelSettings.self, #"{"acknowledge-mode": "plain"}"#) }
    }

    @Test func emailDefaultsAndKeys() throws {
        let s = try decodeSection(EmailChannelSettings.self, #"{"host":"mail.example.org","from":"fallguard@example.org"}"#)
        #expect(s.security == .starttls && s.effectivePort == 587 && s.url == "smtp://mail.example.org:587")
        #expect(s.fromName == "FallGuard" && s.connectTimeout == 10 && s.timeout == 30)
        #expect(s.problems(at: ["channels", "email"]).isEmpty)
        let tls = try decodeSection(EmailChannelSettings.self, #"{"host":"mail.example.org","from":"a@example.org","security":"tls"}"#)
        #expect(tls.effectivePort == 465 && tls.url == "smtps://mail.example.org:465")
        let again = try decodeSection(EmailChannelSettings.self, String(decoding: try encodeSection(tls), as: UTF8.self))
        #expect(again == tls)
        let keys = try #require(try JSONSerialization.jsonObject(with: encodeSection(tls)) as? [String: Any]).keys
        #expect(Set(keys) == ["host", "port", "security", "username", "password", "from", "from-name", "ca-file", "connect-timeout", "timeout"])
    }

    @Test func emailProblemsNameTheirKeys() throws {
        let s = EmailChannelSettings(host: "", port: 0, security: .none, username: "u", from: "not-an-address",
                                     fromName: "a\nb", caFile: "/nonexistent.pem", connectTimeout: 0, timeout: 10_000)
        let keys = Set(s.problems(at: ["channels", "mail"]).map(\.key))
        #expect(keys == Set(["host", "port", "password", "from", "from-name", "security", "ca-file", "connect-timeout", "timeout"]
            .map { "channels.mail.\($0)" }))
        #expect(try decodeSection(EmailChannelSettings.self, "{}").problems(at: []).contains { $0.key == "from" && $0.message.contains("required") })
        #expect(throws: DecodingError.self) { try decodeSection(EmailChannelSettings.self, #"{"security":"ssl"}"#) }
    }
}

// `sensor.cpu` (moved here from FallGuardHardwareTests' SensorAffinityTests).
@Suite struct SensorCPUKeyTests {
    @Test func theConfigurationWordsDecode() throws {
        func decode(_ json: String) throws -> SensorCPU { try decodeSection(SensorCPU.self, json) }
        #expect(try decode(#""last""#) == .last)
        #expect(try decode(#""any""#) == .any)
        #expect(try decode("3") == .number(3))
        #expect(try decode(#""2""#) == .number(2))
        #expect(throws: DecodingError.self) { try decode(#""fast""#) }
        let words = try JSONEncoder().encode([SensorCPU.last, .any, .number(1)].map(Configured.init))
        #expect(String(data: words, encoding: .utf8) == #"["last","any",1]"#)
    }
}
