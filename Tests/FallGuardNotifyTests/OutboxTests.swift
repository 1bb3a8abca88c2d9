import FallGuardCore
import Foundation
import GRDB
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

@Suite struct OutboxTests {
    @Test func theAlertAndItsDeliveriesAreCommittedBeforeAnySend() throws {
        let receiver = try Receiver()
        let path = temporaryFolder() + "/outbox.sqlite"
        let outbox = try Outbox(path: path, settings: testSettings(receiver))
        let keys = try outbox.enqueue(fallAlert("FG-1"), test: false)
        #expect(keys.count == 5)
        let rows = try outbox.deliveries()
        #expect(rows.map(\.idempotencyKey) == keys && rows.allSatisfy { $0.state == .pending && $0.attempts == 0 })
        #expect(rows.map(\.channel) == ["sms", "call", "sms", "sms", "hook"])
        #expect(rows[0].delivery.payload.message.body.contains("Margaret"))
        #expect(receiver.requests.isEmpty)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let (journal, synchronous) = try outbox.db.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(journal == "wal" && synchronous == 2) // 2: FULL
        let m = try outbox.metrics()
        #expect(m.queued == 5 && m.pending == 5 && m.sent == 0 && m.failed == 0)
    }

    @Test func pendingDeliveriesSurviveReopeningTheFile() async throws {
        let receiver = try Receiver(["--hmac-secret", "s3cret"])
        let path = temporaryFolder() + "/outbox.sqlite"
        var keys: [String] = []
        do {
            let first = try Outbox(path: path, settings: testSettings(receiver))
            keys = try first.enqueue(fallAlert("FG-4"), test: false)
        }
        let reopened = try Outbox(path: path, settings: testSettings(receiver))
        #expect(try reopened.deliveries().map(\.idempotencyKey) == keys)
        let drained = try await withWorker(reopened) {
            try await until { try reopened.metrics().sent == 5 }
        }
        #expect(drained)
        let received = receiver.requests
        let hook = try #require(received.first { $0.path == "/hook" })
        #expect(hook.signature_ok == true)
        #expect(Set(received.compactMap { $0.header("Idempotency-Key") }) == [keys[4]])
        #expect(received.filter { $0.path.hasSuffix("Messages.json") }.compactMap { $0.form?["To"] }.sorted()
                == [anna.phone!, ben.phone!, cara.phone!])
        #expect(try reopened.metrics() == OutboxMetrics(queued: 5, pending: 0, armed: 0, cancelled: 0, sent: 5, failed: 0, oldestPendingAge: 0))
    }

    @Test func transientFailuresAreRetriedWithTheSameKeyUntilTheReceiverRecovers() async throws {
        let receiver = try Receiver(["--fail-first", "4", "--fail-path-prefix", "/hook", "--hmac-secret", "s3cret"])
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver))
        let keys = try outbox.enqueue(fallAlert("FG-5"), test: false)
        let drained = try await withWorker(outbox) {
            try await until { try outbox.metrics().sent == 5 }
        }
        #expect(drained)
        let hooks = receiver.requests.filter { $0.path == "/hook" }
        #expect(hooks.map(\.status) == [503, 503, 503, 503, 200])
        #expect(Set(hooks.compactMap { $0.header("Idempotency-Key") }) == [keys[4]])
        // The body, and so the signature, is the same for every retry.
        #expect(Set(hooks.map(\.body)).count == 1)
        let row = try #require(try outbox.deliveries().first { $0.channel == "hook" })
        #expect(row.attempts == 5 && row.state == .sent)
    }

    @Test func aPermanentFailureOfThePrimarySMSEscalatesToTheNextContact() async throws {
        let receiver = try Receiver(["--reject-to", anna.phone!])
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver))
        try outbox.enqueue(fallAlert("FG-6"))
        let drained = try await withWorker(outbox) {
            try await until { try outbox.deliveries().filter { $0.state != .pending }.count == 7 }
        }
        #expect(drained)
        let rows = try outbox.deliveries(incident: "FG-6")
        let annaSMS = try #require(rows.first { $0.idempotencyKey.hasSuffix(".p0.sms") })
        #expect(annaSMS.state == .failed && annaSMS.attempts == 1 && annaSMS.lastError?.contains("21211") == true)
        #expect(rows.filter { $0.role == "primary" && $0.contactIndex == 1 }.map(\.channel) == ["sms", "call"])
        #expect(!rows.contains { $0.role == "primary" && $0.contactIndex == 2 })
        let calls = receiver.requests.filter { $0.path.hasSuffix("Calls.json") }.compactMap { $0.form?["To"] }
        #expect(calls.sorted() == [anna.phone!, ben.phone!])
    }

    @Test func noAcknowledgementInTimeEscalatesAndAnAcknowledgementStopsIt() async throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver, acknowledgeWithin: 0.5))
        try outbox.enqueue(fallAlert("FG-7"))
        let (escalated, drained) = try await withWorker(outbox) {
            // Anna does not answer: Ben becomes responsible, then Cara.
            let escalated = try await until { try outbox.deliveries(incident: "FG-7").contains { $0.role == "primary" && $0.contactIndex == 2 } }
            try outbox.enqueue(fallAlert("FG-8"))
            try outbox.enqueue(Alert(kind: .acknowledged, incident: "FG-8", time: 131, acknowledgedBy: "Anna"))
            try await Task.sleep(for: .seconds(1.5))
            return (escalated, try await until { try outbox.metrics().pending == 0 })
        }
        #expect(escalated && drained)
        let fg8 = try outbox.deliveries(incident: "FG-8")
        #expect(!fg8.contains { $0.role == "primary" && $0.contactIndex != 0 })
        // The follow-up told every contact that Anna took it.
        let followUps = fg8.filter { $0.delivery.payload.alert.kind == .acknowledged }
        #expect(followUps.count == 3 && followUps.allSatisfy { $0.delivery.payload.message.body.hasPrefix("Anna") })
    }

    /// An incident escalates along the contact list it began with: a reload that reorders the
    /// contacts (Anna, Cara, Ben instead of Anna, Ben, Cara) changes the next incident only.
    @Test func aReloadThatReordersTheContactsLeavesAnIncidentInProgressOnItsList() async throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver, acknowledgeWithin: 0.5))
        try outbox.enqueue(fallAlert("FG-11"))
        outbox.update(settings: testSettings(receiver, contacts: [anna, cara, ben], acknowledgeWithin: 0.5))
        try outbox.enqueue(fallAlert("FG-12"))
        let escalated = try await withWorker(outbox) {
            try await until {
                try ["FG-11", "FG-12"].allSatisfy { i in try outbox.deliveries(incident: i).contains { $0.role == "primary" && $0.contactIndex == 2 } }
            }
        }
        #expect(escalated)
        func responsible(_ incident: String) throws -> [String] {
            var names: [String] = []
            for row in try outbox.deliveries(incident: incident) where row.role == "primary" {
                if let name = row.delivery.recipient?.name, names.last != name { names.append(name) }
            }
            return names
        }
        #expect(try responsible("FG-11") == [anna.name, ben.name, cara.name])
        #expect(try responsible("FG-12") == [anna.name, cara.name, ben.name])
    }

    /// A file written by a bridge from before the contact-list column opens (the migration adds
    /// it), and an incident without a stored list escalates along the configured one.
    @Test func anOutboxFromBeforeTheContactListColumnOpensAndEscalates() async throws {
        let receiver = try Receiver()
        let path = temporaryFolder() + "/outbox.sqlite"
        do {
            let v1 = try DatabasePool(path: path)
            try OutboxSchema.migrator.migrate(v1, upTo: "v1")
            let columns = try await v1.read { db in try db.columns(in: "incident").map(\.name) }
            #expect(!columns.contains("contacts_json"))
        }
        let outbox = try Outbox(path: path, settings: testSettings(receiver, acknowledgeWithin: 0.5))
        try outbox.enqueue(fallAlert("FG-13"))
        // As an incident row from before the migration: no stored list.
        try await outbox.db.write { db in try db.execute(sql: "UPDATE incident SET contacts_json = NULL") }
        outbox.update(settings: testSettings(receiver, contacts: [anna, cara, ben], acknowledgeWithin: 0.5))
        let escalated = try await withWorker(outbox) {
            try await until { try outbox.deliveries(incident: "FG-13").contains { $0.role == "primary" && $0.contactIndex == 1 } }
        }
        #expect(escalated)
        let next = try outbox.deliveries(incident: "FG-13").first { $0.role == "primary" && $0.contactIndex == 1 }
        #expect(next?.delivery.recipient?.name == cara.name)
    }

    @Test func anExplicitAcknowledgementStopsEscalation() async throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver, acknowledgeWithin: 0.5))
        try outbox.enqueue(fallAlert("FG-9"))
        try outbox.acknowledge(incident: "FG-9", by: "mqtt:nurse-station")
        let drained = try await withWorker(outbox) {
            try await Task.sleep(for: .seconds(1.2))
            return try await until { try outbox.metrics().pending == 0 }
        }
        #expect(drained)
        #expect(try outbox.deliveries(incident: "FG-9").count == 5)
    }

    @Test func aDeliveryPastItsDeadlineFailsAndEscalates() async throws {
        let receiver = try Receiver()
        receiver.stop()
        var settings = testSettings(receiver, contacts: [anna, ben])
        settings.policy.fall.deadline = 1
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: settings)
        try outbox.enqueue(fallAlert("FG-10"))
        let drained = try await withWorker(outbox) {
            try await until { try outbox.deliveries().count == 6 && outbox.metrics().pending == 0 }
        }
        #expect(drained)
        let rows = try outbox.deliveries()
        #expect(rows.allSatisfy { $0.state == .failed && $0.attempts >= 1 })
        #expect(rows.first?.lastError?.contains("deadline passed") == true)
        #expect(rows.filter { $0.contactIndex == 1 && $0.role == "primary" }.map(\.channel) == ["sms", "call"])
        #expect(try outbox.metrics().failed == 6)
    }

    @Test func anUnreadableRowIsQuarantinedAndTheOthersStillGoOut() async throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver))
        try outbox.enqueue(fallAlert("FG-11"))
        try outbox.enqueue(fallAlert("FG-12"))
        // As a row written by another version might read: valid JSON, not a delivery.
        try await outbox.db.write { db in
            try db.execute(sql: "UPDATE delivery SET delivery_json = '{\"channel\": 1}' WHERE incident = 'FG-11' AND channel = 'sms'")
        }
        let drained = try await withWorker(outbox) {
            try await until(30) { try outbox.metrics().pending == 0 }
        }
        #expect(drained, "\((try? outbox.metrics())?.description ?? "unreadable")")
        let m = try outbox.metrics()
        #expect(m.quarantined == 3 && m.sent == 7, "\(m)")
        let states = try outbox.db.read { db in
            try Row.fetchAll(db, sql: "SELECT incident, channel, state, last_error FROM delivery ORDER BY id")
        }
        #expect(states.filter { $0["state"] == "quarantined" }.allSatisfy {
            ($0["incident"] as String) == "FG-11" && ($0["channel"] as String) == "sms"
                && ($0["last_error"] as String).hasPrefix("cannot be read")
        })
    }

    @Test func theNewestUnacknowledgedAlarmIsTheOneLeftOpen() throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver))
        let now = Date().timeIntervalSince1970
        #expect(try outbox.openAlarm(since: now - 60) == nil)
        try outbox.enqueue(fallAlert("FG-31"))
        try outbox.enqueue(Alert(kind: .helpRequested, incident: "FG-32", time: 140))
        #expect(try outbox.openAlarm(since: now - 60)?.incident == "FG-32")
        #expect(try outbox.openAlarm(since: now + 60) == nil, "older than the engine's active timeout: history")
        try outbox.acknowledge(incident: "FG-32", by: "Anna")
        #expect(try outbox.openAlarm(since: now - 60)?.incident == "FG-31")
    }
}
