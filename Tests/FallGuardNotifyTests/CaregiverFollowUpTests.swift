import FallGuardCore
import Foundation
import GRDB
@testable import FallGuardNotify
import FallGuardTestSupport
import Synchronization
import Testing

@Suite struct ReplyReaderTests {
    let reader = ReplyReader()

    @Test func repliesOfAcknowledgementWordsOnlyAcknowledge() {
        for body in ["OK", "ok", "Ok!", "yes", "YES, coming", "1", "coming", " ok FG-12 ", "FG-12: ok", "ok 👍"] {
            #expect(reader.read(body, for: "FG-12") == .acknowledges, "\(body)")
        }
        for body in ["not ok", "ok but I can't come", "who is this?", "", "12", "FG-12", "no", "okay?"] {
            #expect(reader.read(body, for: "FG-12") == .other, "\(body)")
        }
    }

    @Test func aReplyNamingAnotherIncidentNeverAcknowledgesThisOne() {
        #expect(reader.read("ok FG-11", for: "FG-12") == .otherIncident)
        #expect(reader.read("fg-3 yes", for: "FG-12") == .otherIncident)
        #expect(reader.read("OK FG-12", for: "FG-12") == .acknowledges)
        #expect(ReplyReader(words: ["on my way", "ok"]).read("On my way!", for: "HOME-2") == .acknowledges)
    }

    @Test func callOutcomesFollowTheProvidersStatusAndAnsweringMachineDetection() {
        #expect(TwilioCall(sid: "CA1", status: "ringing").outcome == nil)
        #expect(TwilioCall(sid: "CA1", status: "in-progress", answeredBy: "human").outcome == nil)
        #expect(TwilioCall(sid: "CA1", status: "completed", answeredBy: "human").outcome == .reached)
        #expect(TwilioCall(sid: "CA1", status: "completed").outcome == .reached, "no detection: the provider cannot tell more")
        #expect(TwilioCall(sid: "CA1", status: "completed", answeredBy: "machine_start").outcome == .notReached("answered by machine start"))
        #expect(TwilioCall(sid: "CA1", status: "completed", answeredBy: "unknown").outcome == .notReached("answered by unknown"))
        for s in ["no-answer", "busy", "failed", "canceled"] { #expect(TwilioCall(sid: "CA1", status: s).outcome == .notReached(s)) }
        #expect(RFC2822.seconds("Wed, 25 Nov 2026 16:00:00 +0000") == 1_795_622_400)
        #expect(RFC2822.day(1_795_622_400) == "2026-11-25")
    }
}

/// The follow-up against a Twilio-compatible server on loopback (tools/notify-receiver): real
/// outbox, delivery worker and HTTP, calls moving through their statuses, replies injected as
/// a contact's phone would send them.
@Suite(.serialized) struct CaregiverFollowUpTests {
    /// What the outbox reported, in order.
    final class Progress: Sendable { let seen = Mutex<[DeliveryProgress]>([]) }

    static let replyInterval = 2.0

    /// Anna (primary: SMS and call), Ben and Cara (SMS); calls followed every second, replies
    /// read every 2 s.
    static func settings(_ receiver: Receiver, acknowledgeWithin: Double = 300) -> NotificationSettings {
        var s = testSettings(receiver, acknowledgeWithin: acknowledgeWithin)
        s.policy.fall.broadcast = []
        s.channels["sms"] = TwilioSMSOptions(account: twilioAccount(receiver), replyPollInterval: replyInterval)
        s.channels["call"] = TwilioCallOptions(account: twilioAccount(receiver), callPollInterval: 1)
        s.channels["hook"] = nil
        return s
    }

    /// Outbox, worker and follow-up running while `body` runs; acknowledgements and progress collected.
    static func withFollowUp(_ receiver: Receiver, acknowledgeWithin: Double = 300,
                             _ body: (Outbox, AcknowledgementInbox, Progress) async throws -> Void) async throws {
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: settings(receiver, acknowledgeWithin: acknowledgeWithin))
        let inbox = AcknowledgementInbox(contactNames: [anna, ben, cara].map(\.name))
        let progress = Progress()
        try await withHTTPClient { client in
            let worker = DeliveryWorker(outbox: outbox, channels: try outbox.settings.makeChannels(context: channelContext(client)))
            let followUp = CaregiverFollowUp(outbox: outbox, client: client, inbox: inbox)
            let tasks = [Task { await worker.run() }, Task { await followUp.run() },
                         Task { for await p in outbox.progress { progress.seen.withLock { $0.append(p) } } }]
            defer { tasks.forEach { $0.cancel() } }
            try await body(outbox, inbox, progress)
            tasks.forEach { $0.cancel() }
            for t in tasks { await t.value }
        }
    }

    static func posts(_ receiver: Receiver, _ resource: String, to: Recipient) -> [ReceivedRequest] {
        receiver.requests.filter { $0.method != "GET" && $0.path.hasSuffix(resource) && $0.form?["To"] == to.phone }
    }

    static func outcome(_ outbox: Outbox, key suffix: String) throws -> String? {
        try outbox.db.read { db in
            try String.fetchOne(db, sql: "SELECT outcome FROM delivery WHERE idempotency_key LIKE ?", arguments: ["%." + suffix])
        }
    }

    @Test func anUnansweredCallTellsTheNextContactAtOnce() async throws {
        // The call rings out at a random moment, whatever the phase of the bridge's polls.
        let ringsOut = Double.random(in: 1.5...3.5)
        let receiver = try Receiver(["--call-script", "\(anna.phone!)=ringing@0.5,no-answer@\(String(format: "%.2f", ringsOut))"])
        try await Self.withFollowUp(receiver) { outbox, _, progress in
            try outbox.enqueue(fallAlert())
            #expect(await until(20) { !Self.posts(receiver, "Calls.json", to: ben).isEmpty }, "Ben is called: \(receiver.requests.map(\.path))")
            let annasCall = try #require(Self.posts(receiver, "Calls.json", to: anna).first)
            #expect(annasCall.form?["MachineDetection"] == "Enable")
            // The provider shows no-answer `ringsOut` seconds after the call was placed.
            let visible = annasCall.t + (String(format: "%.2f", ringsOut) as NSString).doubleValue
            let bensSMS = try #require(Self.posts(receiver, "Messages.json", to: ben).last)
            let bensCall = try #require(Self.posts(receiver, "Calls.json", to: ben).first)
            let after = max(bensSMS.t, bensCall.t) - visible
            print("no-answer visible → next contact's SMS and call out: \(String(format: "%.2f", after)) s (limit 15)")
            #expect(after > 0 && after <= 15)
            #expect(Self.posts(receiver, "Messages.json", to: ben).count == 2, "Ben's SMS as another contact, then as the responsible one")
            #expect(try Self.outcome(outbox, key: "p0.call") == "not-reached: no-answer")
            // Ben answers (the default script: a person, 2.5 s in).
            #expect(await until(10) { (try? Self.outcome(outbox, key: "p1.call")) == "reached" })
            let seen = progress.seen.withLock { $0 }
            #expect(seen.contains(.notReached(incident: "FG-1", channel: "call", contact: "Anna", why: "no-answer")), "\(seen)")
            #expect(seen.contains(.reached(incident: "FG-1", channel: "call", contact: "Ben")), "\(seen)")
            #expect(seen.contains(.delivered(incident: "FG-1", channel: "sms", to: "Anna")), "\(seen)")
            let gets = receiver.requests.filter { $0.method == "GET" }
            #expect(gets.allSatisfy { $0.auth_ok == true }, "every poll authenticates")
            #expect(gets.contains { $0.path.contains("/Calls/CA") } && gets.contains { $0.path.contains("Messages.json?") })
        }
    }

    @Test func aCallTheProviderNoLongerShowsCountsAsNotReached() async throws {
        let receiver = try Receiver(["--call-script", "\(anna.phone!)=ringing@30"])
        try await Self.withFollowUp(receiver) { outbox, _, _ in
            try outbox.enqueue(fallAlert())
            #expect(await until(10) { !Self.posts(receiver, "Calls.json", to: anna).isEmpty })
            // The provider forgets the call (a new server on the same port): its GET answers 404.
            let port = receiver.port
            receiver.stop()
            try receiver.start(port: port)
            #expect(await until(10) { (try? Self.outcome(outbox, key: "p0.call"))?.hasPrefix("not-reached: not shown by the provider") == true },
                    "\(String(describing: try? Self.outcome(outbox, key: "p0.call")))")
            #expect(await until(10) { !Self.posts(receiver, "Calls.json", to: ben).isEmpty }, "the next contact is called")
            #expect(try Self.outcome(outbox, key: "p0.call")?.contains(twilioToken) == false)
        }
    }

    @Test func aFailingProviderIsAskedNoMoreOftenThanTheInterval() async throws {
        // Every read of the Messages list answers 503; sending works.
        let receiver = try Receiver(["--fail-first", "1000", "--fail-path-prefix", "/2010-04-01/Accounts/\(twilioSID)/Messages.json?"])
        try await Self.withFollowUp(receiver) { outbox, _, _ in
            try outbox.enqueue(fallAlert())
            #expect(await until(10) { !Self.posts(receiver, "Messages.json", to: ben).isEmpty })
            let start = Date().timeIntervalSince1970
            try await Task.sleep(for: .seconds(8))
            let reads = receiver.requests.filter { $0.method == "GET" && $0.path.contains("Messages.json?") && $0.t >= start }
            #expect(reads.allSatisfy { $0.status == 503 })
            #expect(reads.count >= 2 && reads.count <= Int(8 / Self.replyInterval) + 1, "\(reads.count) reads in 8 s")
        }
    }

    @Test func anOKFromTheSecondContactAcknowledgesWithinTwoPollsAndStopsEscalation() async throws {
        let receiver = try Receiver()
        try await Self.withFollowUp(receiver, acknowledgeWithin: 6) { outbox, inbox, _ in
            try outbox.enqueue(fallAlert())
            #expect(await until(10) { !Self.posts(receiver, "Messages.json", to: ben).isEmpty })
            let acks = Task { await inbox.acknowledgements.first { _ in true } }
            // At a random moment, whatever the phase of the bridge's polls.
            try await Task.sleep(for: .milliseconds(Int.random(in: 0..<2000)))
            let replied = Date().timeIntervalSince1970
            try receiver.inbound(from: "+44 7700 900002", body: "OK", sentAt: replied)
            #expect(await until(10) { (try? Self.acknowledgedBy(outbox, "FG-1")) != nil })
            let took = Date().timeIntervalSince1970 - replied
            print("SMS reply \"OK\" → acknowledged: \(String(format: "%.2f", took)) s (two polling intervals: \(2 * Self.replyInterval) s)")
            #expect(took <= 2 * Self.replyInterval)
            #expect(try Self.acknowledgedBy(outbox, "FG-1") == "Ben (SMS reply)")
            let ack = await acks.value
            #expect(ack == Acknowledgement(incident: "FG-1", by: "Ben", via: "SMS reply"), "\(String(describing: ack))")
            #expect(ack?.byAndVia == "Ben (SMS reply)")
            #expect(try outbox.replies(incident: "FG-1").map(\.meaning) == ["acknowledged"])
            // acknowledge-within is 6 s: without the reply Ben would now be responsible.
            try await Task.sleep(for: .seconds(7))
            let keys = try outbox.deliveries(incident: "FG-1").map(\.idempotencyKey)
            #expect(!keys.contains { $0.hasSuffix(".p1.sms") || $0.hasSuffix(".p1.call") }, "no escalation after the acknowledgement: \(keys)")
            // Nothing open any more (Anna's call ended, reached): the provider is not asked again.
            let before = receiver.requests.filter { $0.method == "GET" }.count
            try await Task.sleep(for: .seconds(2 * Self.replyInterval + 0.5))
            #expect(receiver.requests.filter { $0.method == "GET" }.count == before, "polls only while something is open")
        }
    }

    @Test func aReplyToAnEarlierIncidentNeverAcknowledgesANewOne() async throws {
        let receiver = try Receiver()
        try await Self.withFollowUp(receiver) { outbox, _, _ in
            try outbox.enqueue(fallAlert("FG-1"))
            #expect(await until(10) { !Self.posts(receiver, "Messages.json", to: anna).isEmpty })
            try receiver.inbound(from: anna.phone!, body: "yes")
            #expect(await until(10) { (try? Self.acknowledgedBy(outbox, "FG-1")) == "Anna (SMS reply)" })
            let between = Date().timeIntervalSince1970
            try await Task.sleep(for: .seconds(2.2))
            // FG-2 begins. A late "ok" Anna sent before FG-2's SMS reached her, and one naming FG-1.
            try outbox.enqueue(fallAlert("FG-2"))
            #expect(await until(10) { Self.posts(receiver, "Messages.json", to: anna).count == 2 })
            try receiver.inbound(from: anna.phone!, body: "ok", sentAt: between)
            try receiver.inbound(from: anna.phone!, body: "OK FG-1")
            #expect(await until(10) { ((try? outbox.replies(incident: "FG-2")) ?? []).count == 2 })
            try await Task.sleep(for: .seconds(Self.replyInterval + 0.5))
            #expect(try Self.acknowledgedBy(outbox, "FG-2") == nil, "FG-2 is still open")
            #expect(Set(try outbox.replies(incident: "FG-2").map(\.meaning)) == ["too-early", "other-incident"])
            // The first reply is not read again for the new incident.
            #expect(try outbox.replies(incident: "FG-1").map(\.meaning) == ["acknowledged"])
            try receiver.inbound(from: anna.phone!, body: "coming")
            #expect(await until(10) { (try? Self.acknowledgedBy(outbox, "FG-2")) == "Anna (SMS reply)" })
        }
    }

    static func acknowledgedBy(_ outbox: Outbox, _ incident: String) throws -> String? {
        try outbox.db.read { db in
            try String.fetchOne(db, sql: "SELECT acknowledged_by FROM incident WHERE incident = ?", arguments: [incident])
        }
    }
}
