import FallGuardCore
import Foundation
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

@Suite struct SettingsTests {
    static let minimal = """
        {"wearer": {"name": "Margaret"},
         "contacts": [{"name": "Anna", "phone": "+447700900001"}, {"name": "Ben", "phone": "+447700900002"}],
         "channels": {
           "sms": {"type": "twilio-sms", "account-sid": "AC1", "auth-token": "tok", "from": "+15005550006"},
           "call": {"type": "twilio-call", "account-sid": "AC1", "auth-token": "tok", "from": "+15005550006", "repeat": 2}
         }}
        """

    func decode(_ json: String) throws -> NotificationSettings {
        try JSONDecoder().decode(NotificationSettings.self, from: Data(json.utf8))
    }

    @Test func minimalSettingsGetTheThesisDefaults() throws {
        let s = try decode(Self.minimal)
        #expect(s.errors.isEmpty, "\(s.errors)")
        #expect(s.device == "fallguard" && s.wearer.location == "")
        #expect(s.policy.fall.primary == ["sms", "call"] && s.policy.fall.others == ["sms"] && s.policy.fall.escalate)
        #expect(s.policy.helpRequested == s.policy.fall)
        #expect(s.policy.resolved.escalate == false && s.policy.heartbeat.primary == ["sms"])
        #expect(s.policy.acknowledgeWithin == 300 && s.policy.heartbeatMinute == 9 * 60)
        let call = try #require(s.channels["call"]?.options as? TwilioCallOptions)
        #expect(call.repeatCount == 2 && call.account.baseURL == "https://api.twilio.com" && call.language == "en-GB")
    }

    @Test func aPartialRouteKeepsTheOtherDefaults() throws {
        let json = Self.minimal.replacingOccurrences(of: "\"channels\"", with: "\"policy\": {\"fall\": {\"deadline\": 900}}, \"channels\"")
        let s = try decode(json)
        #expect(s.policy.fall.deadline == 900 && s.policy.fall.primary == ["sms", "call"])
    }

    @Test func everyKeyRoundTrips() throws {
        let s = try decode(Self.minimal)
        let e = JSONEncoder()
        e.outputFormatting = .sortedKeys
        let once = try e.encode(s)
        let twice = try e.encode(try JSONDecoder().decode(NotificationSettings.self, from: once))
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
               "mq": {"type": "mqtt"},
               "odd": {"type": "carrier-pigeon"}
             },
             "policy": {"fall": {"broadcast": ["hook", "pager"]}, "heartbeat-at": "9am"}}
            """
        let keys = Set(try decode(json).errors.map(\.key))
        for expected in ["contacts.0.phone", "channels.sms.auth-token", "channels.call.base-url", "channels.hook.url",
                         "channels.mq.type", "channels.odd.type", "policy.fall.broadcast.1", "policy.heartbeat-at",
                         "contacts.1.phone"] {
            #expect(keys.contains(expected), "\(expected) in \(keys.sorted())")
        }
        let problems = try decode(json).errors
        #expect(problems.first { $0.key == "policy.fall.broadcast.1" }?.message.contains("unknown channel 'pager'") == true)
        #expect(problems.first { $0.key == "channels.mq.type" }?.message.contains("unknown channel type 'mqtt'") == true,
                "the notify module alone knows its own channel types; the configuration module lists them all")
    }

    @Test func aChannelInTheWrongListIsReported() throws {
        let json = Self.minimal.replacingOccurrences(of: "\"channels\"", with: "\"policy\": {\"fall\": {\"broadcast\": [\"sms\"]}}, \"channels\"")
        #expect(try decode(json).errors.map(\.key) == ["policy.fall.broadcast.0"])
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

    @Test func theHeartbeatIsDailyAtItsLocalTime() throws {
        let london = TimeZone(identifier: "Europe/London")!
        let policy = NotificationPolicy(heartbeatAt: "09:30")
        let before = Date(timeIntervalSince1970: 1_795_000_000) // Wed 18 Nov 2026 11:06:40 GMT
        let next = try #require(policy.nextHeartbeat(after: before, timeZone: london))
        let midnight: Double = 1_794_960_000 // 00:00 that Wednesday
        #expect(next.timeIntervalSince1970 == midnight + 86_400 + 9.5 * 3600)
        let after = try #require(policy.nextHeartbeat(after: next, timeZone: london))
        #expect(after.timeIntervalSince(next) == 86_400)
        #expect(NotificationPolicy(heartbeatAt: "25:00").nextHeartbeat(after: before) == nil)
    }

    @Test func backoffDoublesUpToTheCapWithJitter() {
        let r = RetrySettings(initial: 1, max: 60, jitter: 0.5)
        #expect(r.delay(afterAttempts: 1, random: 0) == 1)
        #expect(r.delay(afterAttempts: 4, random: 0) == 8)
        #expect(r.delay(afterAttempts: 30, random: 0) == 60)
        #expect(r.delay(afterAttempts: 4, random: 1) == 4)
        for _ in 0..<100 {
            let d = r.delay(afterAttempts: 3, random: Double.random(in: 0...1))
            #expect(d >= 2 && d <= 4)
        }
    }
}

@Suite struct MessageTests {
    let renderer = MessageRenderer(templates: MessageTemplates(), wearer: Wearer(name: "Margaret", location: "Flat 3, 12 Mill Lane"),
                                   device: "bridge", timeZone: TimeZone(identifier: "Europe/London")!)
    let date = Date(timeIntervalSince1970: 1_795_000_000) // Wed 2026-11-18 11:06:40 UTC (GMT in London)

    @Test func aFallMessageNamesWhoWhenWhereWhyAndTheIncident() {
        let m = renderer.render(fallAlert("FG-7"), at: date, test: false)
        for part in ["Margaret", "11:06 on Wed 18 Nov", "FG-7", "Flat 3, 12 Mill Lane", "impact + posture-change + stillness"] {
            #expect(m.body.contains(part), "\(part) in \(m.body)")
        }
        #expect(m.subject == "Fall alert: Margaret")
        #expect(!m.body.contains("TEST"))
    }

    @Test func everyKindHasItsOwnText() {
        var bodies = Set<String>()
        for kind in AlertKind.allCases {
            let alert = Alert(kind: kind, incident: "FG-2", time: 0, acknowledgedBy: "Ben",
                              sensorFault: SensorFault(.ioError, device: "iio:device0"))
            let m = renderer.render(alert, at: date, test: false)
            #expect(m.body.contains("Margaret") && !m.body.contains("{"), "\(kind): \(m.body)")
            bodies.insert(m.body)
        }
        #expect(bodies.count == AlertKind.allCases.count)
        #expect(renderer.render(Alert(kind: .acknowledged, incident: "FG-2", time: 0, acknowledgedBy: "Ben"), at: date, test: false).body.hasPrefix("Ben"))
    }

    @Test func aTestIsMarkedInSubjectAndBody() {
        let m = renderer.render(fallAlert(), at: date, test: true)
        #expect(m.subject.hasPrefix("[TEST]") && m.body.hasPrefix("TEST, nobody needs help"))
    }

    @Test func longMessagesAreFittedToTwoSMS() {
        let long = MessageRenderer(templates: MessageTemplates(), wearer: Wearer(name: "Margaret", location: String(repeating: "Long street name ", count: 20)),
                                   device: "bridge")
        let m = long.render(fallAlert("FG-12"), at: date, test: true)
        #expect(m.body.count <= 306)
        #expect(m.body.contains("FG-12") && m.body.contains("TEST"))
        let unicode = MessageRenderer(templates: MessageTemplates(), wearer: Wearer(name: "Zoë Ångström", location: "Flat 3"), device: "b")
        #expect(unicode.render(fallAlert(), at: date, test: false).body.count <= 134)
    }

    @Test func templatesOverrideAndUnknownPlaceholdersAreReported() throws {
        let t = try JSONDecoder().decode(MessageTemplates.self, from: Data(#"{"fall": "{wearer} fell ({incident}) {mood}"}"#.utf8))
        #expect(t.problems(at: ["templates"]).map(\.key) == ["templates.fall"])
        let r = MessageRenderer(templates: t, wearer: Wearer(name: "Margaret"), device: "b")
        #expect(r.render(fallAlert("FG-9"), at: date, test: false).body == "Margaret fell (FG-9) {mood}")
    }
}

@Suite struct PlannerTests {
    @Test func theThesisDefault() throws {
        let receiver = try Receiver()
        let plan = DeliveryPlanner(settings: testSettings(receiver)).plan(.fall).deliveries
        let summary = plan.map { "\($0.keySuffix)" }
        #expect(summary == ["p0.sms", "p0.call", "o1.sms", "o2.sms", "b.hook"])
        #expect(plan[0].recipient == anna && plan[3].recipient == cara && plan[4].recipient == nil)
        let escalation = DeliveryPlanner(settings: testSettings(receiver)).escalation(.fall, to: 1)
        #expect(escalation.map(\.keySuffix) == ["p1.sms", "p1.call"])
        #expect(DeliveryPlanner(settings: testSettings(receiver)).plan(.deviceProblem).deliveries.map(\.keySuffix) == ["p0.sms"])
    }
}
