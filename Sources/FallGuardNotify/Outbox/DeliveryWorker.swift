import FallGuardCore
import Foundation
import Logging
import Synchronization

/// Sends the outbox's due deliveries through their channels, concurrently (at most
/// ``maxInFlightPerChannel`` at once per channel), records each result, and escalates
/// incidents whose responsible contact did not acknowledge in time.
public final class DeliveryWorker: Sendable {
    public let outbox: Outbox
    private let channelsByName: Mutex<[String: any NotificationChannel]>
    /// The channels deliveries go through, by name.
    var channels: [String: any NotificationChannel] { channelsByName.withLock { $0 } }
    public let maxInFlightPerChannel: Int
    private let busy = InFlight()

    public init(outbox: Outbox, channels: [any NotificationChannel], maxInFlightPerChannel: Int = 8) {
        self.outbox = outbox
        channelsByName = Mutex(Self.byName(channels))
        self.maxInFlightPerChannel = maxInFlightPerChannel
    }

    private static func byName(_ channels: [any NotificationChannel]) -> [String: any NotificationChannel] {
        Dictionary(channels.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// New channels (SIGHUP): attempts started from now on use them; those in flight finish
    /// on the old ones.
    public func replaceChannels(_ channels: [any NotificationChannel]) {
        channelsByName.withLock { $0 = Self.byName(channels) }
        outbox.wake.signal()
    }

    /// Runs until cancelled (the daemon), or, with `untilDrained`, until nothing is pending
    /// while `producing` says no more alerts are coming.
    public func run(untilDrained: Bool = false, producing: @escaping @Sendable () -> Bool = { false }) async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                do {
                    try await outbox.escalateOverdue()
                    let due = try await outbox.due(excluding: busy.ids, limit: 256)
                    var heldBack = false
                    for d in due {
                        guard busy.start(d.id, channel: d.delivery.channel, limit: maxInFlightPerChannel) else {
                            heldBack = true
                            continue
                        }
                        group.addTask { await self.attempt(d) }
                    }
                    if untilDrained, !producing(), busy.isEmpty, try await !outbox.hasPending() { return }
                    let next = try await outbox.nextDueTime(excluding: busy.ids)
                    // Held back by the per-channel limit: a finishing send wakes us.
                    let wait = heldBack || (untilDrained && producing()) ? 1.0 : next.map { $0 - outbox.now() }
                    if wait.map({ $0 > 0 }) ?? true { await outbox.wake.wait(seconds: wait.map { min($0, 60) }) }
                } catch {
                    if Task.isCancelled { return }
                    outbox.logger.error("outbox worker: \(error); trying again in 1 s")
                    await outbox.wake.wait(seconds: 1)
                }
            }
        }
    }

    /// Sends one delivery and records how it went.
    func attempt(_ d: DueDelivery) async {
        defer {
            busy.finish(d.id, channel: d.delivery.channel)
            outbox.wake.signal()
        }
        let result: AttemptResult
        if let channel = channels[d.delivery.channel] {
            do {
                result = .sent(try await channel.send(d.delivery))
            } catch let failure as DeliveryFailure {
                result = .failed(failure)
            } catch {
                result = .failed(.transient("\(error)"))
            }
        } else {
            result = .failed(.permanent("channel '\(d.delivery.channel)' is not configured"))
        }
        do {
            try await outbox.record(result, for: d)
        } catch {
            // Not recorded: the delivery stays pending and is sent again (same idempotency key).
            outbox.logger.error("cannot record the result of \(d.delivery.idempotencyKey): \(error)")
        }
    }
}

/// The deliveries being sent right now, counted per channel.
private final class InFlight: Sendable {
    private let state = Mutex<(all: Set<Int64>, perChannel: [String: Int])>(([], [:]))

    var ids: Set<Int64> { state.withLock { $0.all } }
    var isEmpty: Bool { state.withLock { $0.all.isEmpty } }

    func start(_ id: Int64, channel: String, limit: Int) -> Bool {
        state.withLock { s in
            guard !s.all.contains(id), s.perChannel[channel, default: 0] < limit else { return false }
            s.all.insert(id)
            s.perChannel[channel, default: 0] += 1
            return true
        }
    }

    func finish(_ id: Int64, channel: String) {
        state.withLock { s in
            s.all.remove(id)
            s.perChannel[channel, default: 1] -= 1
        }
    }
}
