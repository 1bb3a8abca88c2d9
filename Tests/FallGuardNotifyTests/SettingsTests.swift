import FallGuardCore
import Foundation
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

/// The policy's times and back-off. Reading these from the file: FallGuardConfigTests.
@Suite struct SettingsTests {
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

    @Test func templatesOverrideTheBuiltInText() {
        let t = MessageTemplates(bodies: [.fall: "{wearer} fell ({incident}) {mood}"])
        let r = MessageRenderer(templates: t, wearer: Wearer(name: "Margaret"), device: "b")
        #expect(r.render(fallAlert("FG-9"), at: date, test: false).body == "Margaret fell (FG-9) {mood}")
        #expect(MessageTemplates.placeholderNames(in: "{a} b {c}") == ["a", "c"])
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

/// Who acknowledged goes into every contact's "resolved" message: never the sender's own text.
@Suite struct AcknowledgementInboxTests {
    @Test func theSenderIsShownAsAConfiguredContactOrAsHomeAssistant() async {
        let inbox = AcknowledgementInbox(contactNames: ["Anna Smith", "Bob"])
        for by in [" anna smith", "BOB", "Your bank: call +44 7700 900000", ""] { inbox.handler("FG-3", by) }
        var shown: [String] = []
        for await ack in inbox.acknowledgements {
            shown.append(ack.by)
            if shown.count == 4 { break }
        }
        #expect(shown == ["Anna Smith", "Bob", "Home Assistant", "Home Assistant"])
    }
}

/// The location (with how to get in) goes only where `wearer.location-channels` says: by
/// default to the channels that send to a contact, never to a broker, a webhook or a command.
@Suite struct LocationPerChannelTests {
    static let location = "Flat 3, 12 Mill Lane; key safe by the door, code 4711"

    static func settings(_ listed: [String]? = nil) -> NotificationSettings {
        let sms = TwilioSMSOptions(account: TwilioAccount(accountSID: "AC123", authToken: "token-123", from: "+447700900999"))
        return NotificationSettings(wearer: Wearer(name: "Margaret", location: location, locationChannels: listed),
                                    contacts: [Recipient(name: "Anna", phone: "+447700900123")],
                                    channels: ["sms": sms, "pager": ExecOptions(command: ["/bin/cat"]), "log": ConsoleOptions()])
    }

    static func payload(body: String) -> AlertPayload {
        AlertPayload(idempotencyKey: "k", test: false, device: "hall", wearer: Wearer(name: "Margaret", location: location),
                     alert: Alert(kind: .fall, incident: "FG-1", time: 1),
                     message: RenderedMessage(subject: "Fall: Margaret", body: body), sentAt: "2026-11-23T10:00:00+00:00")
    }

    @Test func byDefaultOnlyChannelsToAContactCarryIt() throws {
        let s = Self.settings()
        #expect(s.carriesLocation("sms") && !s.carriesLocation("pager") && !s.carriesLocation("log"))
        let full = Self.payload(body: "Margaret may have fallen. Location: \(Self.location). Incident FG-1.")
        #expect(s.payload(full, for: "sms") == full)
        let withheld = s.payload(full, for: "pager")
        #expect(withheld.wearer.location.isEmpty && withheld.wearer.name == "Margaret")
        #expect(!withheld.message.body.contains("4711") && withheld.message.body.contains(Wearer.withheldLocation), "\(withheld.message.body)")
        let json = String(decoding: try JSONEncoder().encode(withheld), as: UTF8.self)
        #expect(!json.contains("4711") && !json.contains("Mill Lane"), "\(json)")
        // Shortened for an SMS (a prefix and `~`): withheld all the same.
        let cut = s.payload(Self.payload(body: "Location: \(Self.location.prefix(30))~. Incident FG-1."), for: "log")
        #expect(!cut.message.body.contains("Mill Lane") && cut.message.body.contains(Wearer.withheldLocation), "\(cut.message.body)")
    }

    @Test func theListDecides() {
        let s = Self.settings(["pager"])
        #expect(s.carriesLocation("pager") && !s.carriesLocation("sms"))
    }

    @Test func theOutboxStoresEachDeliveryWithItsChannelsShare() throws {
        let dir = TempDirectory("location")
        var s = Self.settings()
        s.policy.fall = AlertRoute(primary: ["sms"], others: [], broadcast: ["pager", "log"])
        let outbox = try Outbox(path: dir.path + "/outbox.sqlite", settings: s)
        let deliveries = outbox.plannedDeliveries(of: Alert(kind: .fall, incident: "FG-1", time: 1), uid: "u1")
        #expect(Set(deliveries.map(\.channel)) == ["sms", "pager", "log"])
        for d in deliveries {
            #expect(d.payload.message.body.contains("4711") == (d.channel == "sms"), "\(d.channel): \(d.payload.message.body)")
        }
    }
}
