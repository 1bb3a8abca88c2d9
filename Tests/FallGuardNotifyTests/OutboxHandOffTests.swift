import FallGuardCore
import Foundation
import GRDB
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

/// An outbox that cannot take an alert (here its writer set `query_only`, which SQLite answers
/// as it does a read-only file: SQLITE_READONLY) must neither lose the alert nor send it twice.
@Suite struct OutboxHandOffTests {
    /// Makes every write to `outbox` fail (or work again).
    static func readOnly(_ outbox: Outbox, _ on: Bool) throws {
        try outbox.db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA query_only = \(on ? 1 : 0)") }
    }

    @Test func anAlertTheOutboxCannotTakeGoesOutDirectlyAndIsStoredAsSentOnceItRecovers() async throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver))
        let handOff = OutboxHandOff(outbox: outbox)
        try Self.readOnly(outbox, true)
        try handOff.deliver(fallAlert("FG-21"))   // does not throw: held
        #expect(handOff.heldCount == 1)
        #expect(handOff.problem?.contains("the outbox cannot take alerts") == true, "\(handOff.problem ?? "nil")")
        #expect(try outbox.metrics().queued == 0)
        try await withHTTPClient { client in
            let worker = DeliveryWorker(outbox: outbox, channels: try outbox.settings.makeChannels(context: channelContext(client)))
            let task = Task { await withDiscardingTaskGroup { group in
                group.addTask { await worker.run() }
                group.addTask { await handOff.run(sendingThrough: worker) }
            } }
            defer { task.cancel() }
            #expect(await until(20) { receiver.requests.count == 5 },
                    "all five deliveries go out directly while the outbox is read-only")
            try Self.readOnly(outbox, false)
            #expect(await until(10) { handOff.heldCount == 0 }, "the held alert reaches the outbox once it can be written")
            #expect(handOff.problem == nil, "\(handOff.problem ?? "")")
            let rows = try outbox.deliveries(incident: "FG-21")
            #expect(rows.count == 5 && rows.allSatisfy { $0.state == .sent }, "\(rows.map(\.state))")
            let hookKey = try #require(receiver.requests.first { $0.path == "/hook" }?.header("Idempotency-Key"))
            #expect(rows.contains { $0.idempotencyKey == hookKey }, "the outbox keeps the key the direct send used")
            try await Task.sleep(for: .seconds(1.5))
            #expect(receiver.requests.count == 5, "nothing is sent twice")
            task.cancel()
            await task.value
        }
    }

    @Test func heldAlertsKeepTheirOrderAndAFullQueueDropsTheLeastUrgentFirst() throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver))
        let handOff = OutboxHandOff(outbox: outbox, capacity: 3)
        try Self.readOnly(outbox, true)
        try handOff.deliver(Alert(kind: .heartbeat, incident: "heartbeat", time: 0))
        try handOff.deliver(fallAlert("FG-22"))
        try handOff.deliver(Alert(kind: .helpRequested, incident: "FG-23", time: 1))
        try handOff.deliver(Alert(kind: .resolvedByWearer, incident: "FG-23", time: 2))
        #expect(handOff.heldCount == 3, "the heartbeat, the oldest of the least urgent, made room")
        try Self.readOnly(outbox, false)
        #expect(try outbox.metrics().queued == 0)
        handOff.handHeldAlertsToOutbox()
        #expect(handOff.heldCount == 0)
        let order = try outbox.db.read { db in try String.fetchAll(db, sql: "SELECT kind FROM alert ORDER BY id") }
        #expect(order == ["fall", "help-requested", "resolved-by-wearer"])
    }

    @Test func aResultTheOutboxCannotStoreIsKeptAndItsDeliveryNotSentAgain() async throws {
        let receiver = try Receiver()
        let outbox = try Outbox(path: temporaryFolder() + "/outbox.sqlite", settings: testSettings(receiver))
        try outbox.enqueue(fallAlert("FG-25"))
        try Self.readOnly(outbox, true)
        let stored = try await withWorker(outbox) {
            #expect(await until(20) { receiver.requests.count >= 5 })
            try await Task.sleep(for: .seconds(1.5))
            #expect(receiver.requests.count == 5, "each delivery once, not again on every pass: \(receiver.requests.count)")
            try Self.readOnly(outbox, false)
            return try await until(5) { try outbox.metrics().sent == 5 }
        }
        #expect(stored, "the results kept in memory are stored once the outbox can be written")
        #expect(receiver.requests.count == 5)
    }
}
