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
    /// What went wrong on the last pass, nil after a pass that worked.
    private let trouble = Mutex<String?>(nil)
    /// Results the outbox could not store (read-only, full): kept here, their deliveries not
    /// sent again, and stored on a later pass.
    private let unrecorded = Mutex<[Int64: (delivery: DueDelivery, result: AttemptResult)]>([:])
    /// Channels that could not start, with why: their deliveries wait (a transient failure)
    /// instead of failing for good as an unconfigured channel's do.
    private let unavailable: Mutex<[String: String]>
    /// Since when each channel with a fallback has failed every attempt (cleared by a success).
    private let failingSince = Mutex<[String: Double]>([:])
    /// Called on every pass of the loop (the daemon's watchdog counts them).
    private let onPass: @Sendable () -> Void
    /// The longest the loop sleeps between passes: a loop that lives calls `onPass` at least this often.
    public static let longestSleep = 4.0

    public init(outbox: Outbox, channels: [any NotificationChannel], maxInFlightPerChannel: Int = 8,
                unavailable: [String: String] = [:], onPass: @escaping @Sendable () -> Void = {}) {
        self.outbox = outbox
        self.unavailable = Mutex(unavailable)
        self.onPass = onPass
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
        unavailable.withLock { u in for c in channels { u[c.name] = nil } }
        outbox.wake.signal()
    }

    /// Nil while the loop works; otherwise its last error (the outbox cannot be read, say).
    public var problem: String? {
        let count = unrecorded.withLock { $0.count }
        return trouble.withLock { $0 } ?? (count == 0 ? nil : "delivery worker: \(count) results not stored yet (the outbox cannot be written)")
    }

    /// One line per channel that could not start.
    public var unavailableChannels: [String] {
        unavailable.withLock { $0 }.sorted { $0.key < $1.key }.map { "channel \($0.key) could not start (its deliveries wait): \($0.value)" }
    }

    /// Whether a send is in flight or a delivery is still to go out (false when the outbox
    /// cannot be read: then there is nothing this worker can do).
    public var hasWork: Bool {
        get async {
            if !busy.isEmpty { return true }
            return (try? await outbox.hasPending()) ?? false
        }
    }

    /// Runs until cancelled (the daemon), or, with `untilDrained`, until nothing is pending
    /// while `producing` says no more alerts are coming.
    public func run(untilDrained: Bool = false, producing: @escaping @Sendable () -> Bool = { false }) async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                onPass()
                do {
                    await recordEarlierResults()
                    let skip = busy.ids.union(unrecorded.withLock { $0.keys })
                    try await outbox.escalateOverdue()
                    let due = try await outbox.due(excluding: skip, limit: 256)
                    var heldBack = false
                    for d in due {
                        guard busy.start(d.place.id, channel: d.delivery.channel, limit: maxInFlightPerChannel) else {
                            heldBack = true
                            continue
                        }
                        group.addTask { await self.attempt(d) }
                    }
                    if untilDrained, !producing(), busy.isEmpty, try await !outbox.hasPending() { return }
                    let next = try await outbox.nextDueTime(excluding: skip)
                    // Held back by the per-channel limit: a finishing send wakes us. Results not
                    // stored yet are tried again each second.
                    let retryStoring = unrecorded.withLock { !$0.isEmpty }
                    let wait = heldBack || retryStoring || (untilDrained && producing()) ? 1.0 : next.map { $0 - outbox.now() }
                    trouble.withLock { $0 = nil }
                    if wait.map({ $0 > 0 }) ?? true { await outbox.wake.wait(seconds: min(wait ?? Self.longestSleep, Self.longestSleep)) }
                } catch {
                    if Task.isCancelled { return }
                    let text = "delivery worker: \(error)"
                    let changed = trouble.withLock { t in defer { t = text }; return t != text }
                    // Once while the same error lasts: a read-only disk must not fill the journal.
                    if changed { outbox.logger.error("outbox worker: \(error); trying again every second") }
                    await outbox.wake.wait(seconds: 1)
                }
            }
        }
    }

    /// Sends one delivery and records how it went.
    func attempt(_ d: DueDelivery) async {
        defer {
            busy.finish(d.place.id, channel: d.delivery.channel)
            outbox.wake.signal()
        }
        let result = await send(d.delivery)
        do {
            try await outbox.record(result, for: d, retryBy: fallbackDue(d.delivery.channel))
        } catch {
            // Kept until the outbox can store it; meanwhile the delivery is not sent again.
            unrecorded.withLock { $0[d.place.id] = (d, result) }
            outbox.logger.error("cannot record the result of \(d.delivery.idempotencyKey) (kept in memory, not sent again): \(error)")
        }
    }

    /// Stores the results an earlier pass could not, in order, until one fails.
    private func recordEarlierResults() async {
        for (id, entry) in unrecorded.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            do { try await outbox.record(entry.result, for: entry.delivery) } catch { return }
            unrecorded.withLock { $0[id] = nil }
        }
    }
}

extension DeliveryWorker {
    /// One attempt through the delivery's channel; when that fails and the channel has a
    /// `fallback` (a modem) and has failed for its `fallback-after` (or failed for good, or
    /// could not start), the same delivery through the fallback. One row, one success: each
    /// contact is told once, by whichever channel worked.
    func send(_ delivery: Delivery) async -> AttemptResult {
        let result = await sendThrough(delivery, channel: delivery.channel)
        guard let options = outbox.settings.channels[delivery.channel] as? any FallbackChannelOptions,
              let fallback = options.fallback, fallback != delivery.channel else { return result }
        let t = outbox.now()
        guard case let .failed(failure) = result else {
            failingSince.withLock { $0[delivery.channel] = nil }
            return result
        }
        let since = failingSince.withLock { f in
            if f[delivery.channel] == nil { f[delivery.channel] = t }
            return f[delivery.channel]!
        }
        let permanent = if case .permanent = failure { true } else { false }
        guard permanent || unavailable.withLock({ $0[delivery.channel] != nil }) || t - since >= options.fallbackAfter else {
            return result
        }
        let meta: Logger.Metadata = ["key": "\(delivery.idempotencyKey)", "channel": "\(delivery.channel)"]
        outbox.logger.warning("\(delivery.channel) failing for \(Int(t - since)) s (\(failure)): sending by \(fallback)", metadata: meta)
        switch await sendThrough(delivery, channel: fallback) {
        case let .sent(receipt):
            return .sent(DeliveryReceipt(providerID: receipt.providerID, detail: "by \(fallback) (fallback of \(delivery.channel)): \(receipt.detail)"))
        case let .failed(second):
            // Retried: the fallback may recover (a signal back), and so may the channel.
            return .failed(.transient("\(failure); fallback \(fallback): \(second)"))
        }
    }

    /// When a failing channel's deliveries are next due at the latest: the moment its fallback
    /// takes over, so that a long backoff does not delay the fallback. Nil without one.
    func fallbackDue(_ channel: String) -> Double? {
        guard let options = outbox.settings.channels[channel] as? any FallbackChannelOptions, options.fallback != nil,
              let since = failingSince.withLock({ $0[channel] }) else { return nil }
        return since + options.fallbackAfter
    }

    /// One attempt through the channel named `name`.
    private func sendThrough(_ delivery: Delivery, channel name: String) async -> AttemptResult {
        guard let channel = channels[name] else {
            if let why = unavailable.withLock({ $0[name] }) {
                return .failed(.transient("channel '\(name)' could not start: \(why)"))
            }
            return .failed(.permanent("channel '\(name)' is not configured"))
        }
        do {
            return .sent(try await channel.send(delivery))
        } catch let failure as DeliveryFailure {
            return .failed(failure)
        } catch {
            return .failed(.transient("\(error)"))
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
