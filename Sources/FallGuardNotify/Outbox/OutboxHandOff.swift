import FallGuardCore
import Foundation
import Logging
import Synchronization

/// The alarm's ``AlertSink`` in the daemon: the ``Outbox``, and for an alert the outbox cannot
/// take (a read-only file or directory, a full disk, a lock held past the busy timeout) a
/// bounded queue in memory. While an alert is held, ``run(sendingThrough:)`` hands it to the
/// outbox again every second and meanwhile sends it directly through the channels, under the
/// idempotency keys the outbox will give it: what went out directly is stored as sent once the
/// outbox recovers, not sent twice. A hand-off that failed is never final and never silent:
/// ``problem`` says so until the outbox has everything.
public final class OutboxHandOff: AlertSink, Sendable {
    public let outbox: Outbox
    /// Alerts held at most; past it the oldest of the least urgent is dropped (with a critical log).
    public let capacity: Int
    private let held = Mutex<[HeldAlert]>([])
    /// The outbox's last failure, nil since a write that worked.
    private let fault = Mutex<String?>(nil)
    private let wake = WakeSignal()
    private let logger: Logger

    public init(outbox: Outbox, capacity: Int = 64, logger: Logger = Logger(label: "fallguard.outbox")) {
        self.outbox = outbox
        self.capacity = max(1, capacity)
        self.logger = logger
    }

    /// ``AlertSink``: into the outbox, or held (alerts keep their order: while any is held, the
    /// next one queues behind it).
    public func deliver(_ alert: Alert) throws {
        if held.withLock({ $0.isEmpty }) {
            do {
                try outbox.deliver(alert)
                fault.withLock { $0 = nil }
                return
            } catch {
                noteFault(error)
            }
        }
        hold(alert)
    }

    /// ``AlertSink``: the countdown's alert held in the outbox. A failure is noted and thrown
    /// (the alarm logs it); the alert is handed over again at expiry.
    public func arm(_ alert: Alert, fallback seconds: Double) throws {
        do { try outbox.arm(alert, fallback: seconds) } catch {
            noteFault(error)
            throw error
        }
    }

    /// ``AlertSink``: the countdown's held alert cancelled. A failure is noted and thrown.
    public func disarm(incident: String, reason: String) throws {
        do { try outbox.disarm(incident: incident, reason: reason) } catch {
            noteFault(error)
            throw error
        }
    }

    /// Alerts in memory, not yet in the outbox.
    public var heldCount: Int { held.withLock { $0.count } }

    /// Nil while every alert reached the outbox; otherwise what is wrong, for the status.
    public var problem: String? {
        let (count, fault) = (heldCount, fault.withLock { $0 })
        guard count > 0 || fault != nil else { return nil }
        let why = fault.map { "the outbox cannot take alerts (\($0))" } ?? "the outbox works again"
        return count == 0 ? why : "\(why); \(count) alert\(count == 1 ? "" : "s") held in memory, sent directly through the channels"
    }

    /// Until cancelled: while any alert is held, once a second, hands the held alerts to the
    /// outbox in order (stopping at the first failure), then sends what is still held directly
    /// through `worker`'s channels (each delivery until it is sent or fails for good).
    public func run(sendingThrough worker: DeliveryWorker) async {
        while !Task.isCancelled {
            guard heldCount > 0 else {
                await wake.wait(seconds: nil)
                continue
            }
            handHeldAlertsToOutbox()
            await sendHeldAlertsDirectly(through: worker)
            await wake.wait(seconds: 1)
        }
    }

    private func noteFault(_ error: any Error) {
        fault.withLock { $0 = "\(error)" }
    }

    private func hold(_ alert: Alert) {
        let entry = HeldAlert(alert: alert, uid: outbox.handOffUID(for: alert))
        let dropped = held.withLock { queue -> HeldAlert? in
            queue.append(entry)
            guard queue.count > capacity else { return nil }
            let rank = { (a: HeldAlert) in AlertSeverity.allCases.firstIndex(of: a.alert.kind.severity) ?? 0 }
            let victim = queue.indices.min { (rank(queue[$0]), $0) < (rank(queue[$1]), $1) } ?? 0
            return queue.remove(at: victim)
        }
        logger.critical("alert \(alert.kind.rawValue) NOT in the outbox: held in memory, retried every second and sent directly through the channels",
                        metadata: ["incident": "\(alert.incident)", "error": "\(fault.withLock { $0 } ?? "-")"])
        if let dropped {
            logger.critical("alert \(dropped.alert.kind.rawValue) DROPPED: \(capacity) alerts already held in memory",
                            metadata: ["incident": "\(dropped.alert.incident)", "sent-directly": "\(dropped.settled.count)"])
        }
        wake.signal()
    }

    /// Hands the held alerts to the outbox in order, stopping at the first failure.
    func handHeldAlertsToOutbox() {
        while let first = held.withLock({ $0.first }) {
            do {
                try outbox.deliver(first.alert, uid: first.uid, settled: first.settled)
            } catch {
                noteFault(error)
                return
            }
            held.withLock { $0.removeAll { $0.uid == first.uid } }
            fault.withLock { $0 = nil }
            logger.notice("held alert \(first.alert.kind.rawValue) is in the outbox now",
                          metadata: ["incident": "\(first.alert.incident)", "sent-directly": "\(first.settled.count)"])
        }
    }

    private func sendHeldAlertsDirectly(through worker: DeliveryWorker) async {
        for entry in held.withLock({ $0 }) {
            let open = outbox.plannedDeliveries(of: entry.alert, uid: entry.uid)
                .filter { entry.settled[$0.payload.idempotencyKey] == nil }
            await withTaskGroup(of: (String, AttemptResult).self) { group in
                for delivery in open {
                    group.addTask { (delivery.payload.idempotencyKey, await worker.send(delivery)) }
                }
                for await (key, result) in group {
                    let state: String
                    switch result {
                    case .sent: state = "sent"
                    case .failed(.permanent(let why)):
                        state = "failed"
                        logger.error("direct send failed for good: \(why)", metadata: ["key": "\(key)"])
                    case .failed(.transient(let why)):
                        logger.warning("direct send failed, trying again in 1 s: \(why)", metadata: ["key": "\(key)"])
                        continue
                    }
                    held.withLock { queue in
                        if let i = queue.firstIndex(where: { $0.uid == entry.uid }) { queue[i].settled[key] = state }
                    }
                }
            }
        }
    }
}

/// An alert the outbox could not take, in memory: its keys are fixed by `uid`.
struct HeldAlert: Sendable {
    var alert: Alert
    var uid: String
    /// Deliveries settled by a direct send: idempotency key → `sent` or `failed`.
    var settled: [String: String] = [:]
}
