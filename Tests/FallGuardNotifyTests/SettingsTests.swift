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
