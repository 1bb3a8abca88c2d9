import FallGuardCore
import Foundation
import GRDB
import Synchronization
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

/// A countdown's alert is committed when the countdown begins, held, and either released at
/// expiry (same keys), cancelled by an abort, replaced by a help request, or sent by itself
/// at its fallback time when the process that armed it is gone.
@Suite struct ArmedCountdownTests {
    /// Unix time for the outbox, moved by the test.
    final class TestClock: Sendable {
        let t = Mutex(1_800_000_000.0)
        var now: @Sendable () -> Double { { self.t.withLock { $0 } } }
        func advance(_ s: Double) { t.withLock { $0 += s } }
    }

    func outbox(_ receiver: Receiver, _ clock: TestClock, path: String) throws -> Outbox {
        try Outbox(path: path, settings: testSettings(receiver), now: clock.now)
    }

    @Test func theHeldAlertIsOnDiskAtOnceAndReleasedAtExpiryWithTheSameKeys() async throws {
        let receiver = try Receiver(["--hmac-secret", "s3cret"])
        let clock = TestClock()
        let box = try outbox(receiver, clock, path: temporaryFolder() + "/outbox.sqlite")
        try box.arm(fallAlert("FG-1"), fallback: 37)
        let armed = try box.deliveries()
        #expect(armed.count == 5 && armed.allSatisfy { $0.state == .armed })
        #expect(try box.metrics().armed == 5 && box.metrics().pending == 0)
        let sent = try await withWorker(box) { () async throws -> Bool in
            clock.advance(30)  // the countdown runs; nothing goes out
            box.wake.signal()
            try await Task.sleep(for: .milliseconds(400))
            #expect(receiver.requests.isEmpty)
            var final = fallAlert("FG-1")
            final.wearerResumedWalking = true
            try box.deliver(final)
            return try await until(30) { try box.metrics().sent == 5 }
        }
        #expect(sent)
        let rows = try box.deliveries()
        #expect(rows.map(\.idempotencyKey) == armed.map(\.idempotencyKey))
        #expect(rows.allSatisfy { $0.delivery.payload.alert.wearerResumedWalking })
        let keys = Set(receiver.requests.compactMap { $0.header("Idempotency-Key") })
        #expect(keys == [armed[4].idempotencyKey])
        #expect(receiver.requests.count == 5)
        #expect(try box.metrics() == OutboxMetrics(queued: 5, pending: 0, armed: 0, cancelled: 0, sent: 5, failed: 0, oldestPendingAge: 0))
    }

    @Test func anAbortCancelsTheHeldDeliveriesAndTheirEscalation() async throws {
        let receiver = try Receiver()
        let clock = TestClock()
        let box = try outbox(receiver, clock, path: temporaryFolder() + "/outbox.sqlite")
        try box.arm(fallAlert("FG-2"), fallback: 37)
        #expect(try await box.db.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM incident") } == 1)
        try box.disarm(incident: "FG-2", reason: "aborted: aborted by the wearer 4.2 s into the countdown")
        try await withWorker(box) {
            clock.advance(400)  // past the fallback and the acknowledgement time
            box.wake.signal()
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(receiver.requests.isEmpty)
        let rows = try box.deliveries()
        #expect(rows.count == 5 && rows.allSatisfy { $0.state == .cancelled && $0.lastError?.contains("aborted by the wearer") == true })
        #expect(try await box.db.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM incident") } == 0)
        #expect(try box.metrics().cancelled == 5 && box.metrics().queued == 0)
        // A disarm for a countdown this outbox never armed changes nothing.
        try box.disarm(incident: "FG-9", reason: "x")
    }

    @Test func aHelpRequestDuringTheCountdownReplacesTheHeldFallAlert() async throws {
        let receiver = try Receiver()
        let clock = TestClock()
        let box = try outbox(receiver, clock, path: temporaryFolder() + "/outbox.sqlite")
        try box.arm(fallAlert("FG-3"), fallback: 37)
        try box.deliver(Alert(kind: .helpRequested, incident: "FG-3", time: 110, fall: sampleFall))
        let rows = try box.deliveries()
        #expect(rows.prefix(5).allSatisfy { $0.state == .cancelled && $0.lastError == "replaced by the help-requested alert" })
        #expect(rows.dropFirst(5).allSatisfy { $0.state == .pending && $0.idempotencyKey.hasPrefix("FG-3.help-requested.") })
        let sent = try await withWorker(box) {
            try await until(30) { try box.metrics().sent == rows.count - 5 }
        }
        #expect(sent)
        #expect(receiver.requests.allSatisfy { $0.form?["Body"].map { !$0.isEmpty } ?? true })
        #expect(receiver.requests.count == rows.count - 5)
    }

    @Test func aCountdownInterruptedByACrashSendsItsAlertAtItsFallbackTime() async throws {
        let receiver = try Receiver()
        let clock = TestClock()
        let path = temporaryFolder() + "/outbox.sqlite"
        var keys: [String] = []
        do {
            // The process that armed it dies during the countdown: no release, no disarm.
            let first = try outbox(receiver, clock, path: path)
            try first.arm(fallAlert("FG-4"), fallback: 37)
            keys = try first.deliveries().map(\.idempotencyKey)
        }
        clock.advance(5)
        let second = try outbox(receiver, clock, path: path)
        let resumed = try second.resumeInterruptedCountdowns()
        #expect(resumed.map(\.incident) == ["FG-4"])
        #expect(resumed.first.map { abs($0.due - (clock.now() + 32)) < 0.001 } == true)
        #expect(try second.deliveries().allSatisfy { $0.state == .pending })
        // The new run's own FG-4 (if numbering started again) is not taken for the old one.
        try second.deliver(fallAlert("FG-4"))
        let sent = try await withWorker(second) { () async throws -> Bool in
            // The new alert goes at once; the interrupted one waits for its time.
            let fresh = try await until(30) { try second.metrics().sent == 5 }
            try await Task.sleep(for: .milliseconds(300))
            let sentBefore = try second.metrics().sent
            #expect(fresh && sentBefore == 5)
            clock.advance(33)
            second.wake.signal()
            return try await until(30) { try second.metrics().sent == 10 }
        }
        #expect(sent)
        let old = try second.deliveries().filter { keys.contains($0.idempotencyKey) }
        #expect(old.count == 5 && old.allSatisfy { $0.state == .sent && $0.attempts == 1 })
        #expect(try second.resumeInterruptedCountdowns().isEmpty)
    }

    @Test func theWorkerSendsAnArmedAlertNobodyReleasedOnceItsFallbackTimeHasCome() async throws {
        // The armed process is alive but its alarm thread never came back (a bug, a stuck disk):
        // the alert still goes out.
        let receiver = try Receiver()
        let clock = TestClock()
        let box = try outbox(receiver, clock, path: temporaryFolder() + "/outbox.sqlite")
        try box.arm(fallAlert("FG-5"), fallback: 37)
        let sent = try await withWorker(box) { () async throws -> Bool in
            clock.advance(36.9)
            box.wake.signal()
            try await Task.sleep(for: .milliseconds(300))
            #expect(receiver.requests.isEmpty)
            clock.advance(0.2)
            box.wake.signal()
            return try await until(30) { try box.metrics().sent == 5 }
        }
        #expect(sent)
    }
}
