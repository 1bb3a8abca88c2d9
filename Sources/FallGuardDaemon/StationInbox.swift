import Dispatch
import NIOCore
import Synchronization

/// The station's messages on their way from libmosquitto's network thread to the site
/// (issue 40): the network thread only appends (O(1), never waits for the site's lock or
/// SQLite), so the station keeps reading, answers its keepalive and is never taken off the
/// broker by a flood; one worker folds them in batches.
///
/// Bounded and fair: each bridge (the device level of its topic) has its own queue of at most
/// ``perDevice`` messages, and the worker takes one message of each bridge in turn, so a
/// bridge that floods its own topics delays another bridge's alarm by one message, not by its
/// backlog. Each bridge may also send ``perSecond`` messages a second after a burst of ``burst``
/// (a bridge sends a few a minute, an alarm a handful at once): past that, or past ``perDevice``
/// waiting (or ``total`` in all, or ``bytes``), a message is dropped and counted, and the next
/// batch says how many. So a bridge that floods its topics costs the worker at most
/// ``perSecond`` messages a second, whatever it sends. The residents' bridges (``urgent``) are
/// taken before the others: 20,000 bridges nobody named, each with a message waiting, delay a
/// resident's alarm by none of theirs.
final class StationInbox: Sendable {
    struct Message: Sendable {
        var topic: String
        var payload: [UInt8]
        var retained: Bool
        /// When it came off the network (the station's clock, Unix seconds).
        var at: Double
    }

    static let perDevice = 256
    static let total = 200_000
    static let bytes = 48 << 20
    static let perSecond = 10.0
    static let burst = 100.0
    /// Bridges whose rate is followed; past it every bridge starts again with a full burst.
    static let followed = 65_536
    /// Messages folded in one batch (one lock of the site, one SQLite transaction).
    static let batch = 256

    private struct Queues {
        var byDevice: [String: CircularBuffer<Message>] = [:]
        /// Devices with a message waiting, each once, in turn: the residents', then the others.
        var urgent = CircularBuffer<String>()
        var ready = CircularBuffer<String>()
        var count = 0
        var bytes = 0
        var dropped = 0
        var draining = false
        /// Each bridge's tokens and when they were last counted (a token bucket).
        var rate: [String: (tokens: Double, at: Double)] = [:]
    }

    private let queues = Mutex(Queues())
    private let worker = DispatchQueue(label: "fallguard.station.inbox")
    private let fold: @Sendable ([Message], Int) -> Void
    private let device: @Sendable (String) -> String
    private let isUrgent: @Sendable (String) -> Bool

    /// - Parameters:
    ///   - device: the bridge a topic belongs to (its queue).
    ///   - urgent: whether a bridge's messages go before the others' (a resident's).
    ///   - fold: called on the worker with each batch, in the order each bridge sent them, and
    ///     how many messages were dropped since the last batch.
    init(device: @escaping @Sendable (String) -> String, urgent: @escaping @Sendable (String) -> Bool = { _ in false },
         fold: @escaping @Sendable ([Message], Int) -> Void) {
        (self.device, self.isUrgent, self.fold) = (device, urgent, fold)
    }

    /// Called on the network thread: appends, or drops when the bridge's queue (or all) is full.
    func post(_ message: Message) {
        let key = device(message.topic)
        let size = message.topic.utf8.count + message.payload.count
        let urgent = isUrgent(key)
        let start: Bool = queues.withLock { q in
            if q.rate.count >= Self.followed { q.rate.removeAll(keepingCapacity: true) }
            var bucket = q.rate[key] ?? (Self.burst, message.at)
            bucket.tokens = min(Self.burst, bucket.tokens + max(0, message.at - bucket.at) * Self.perSecond)
            bucket.at = message.at
            guard bucket.tokens >= 1, q.count < Self.total, q.bytes + size <= Self.bytes,
                  (q.byDevice[key]?.count ?? 0) < Self.perDevice else {
                q.rate[key] = bucket
                q.dropped += 1
                return false
            }
            bucket.tokens -= 1
            q.rate[key] = bucket
            if q.byDevice[key] == nil {
                q.byDevice[key] = CircularBuffer(initialCapacity: 4)
                if urgent { q.urgent.append(key) } else { q.ready.append(key) }
            }
            q.byDevice[key]!.append(message)
            q.count += 1
            q.bytes += size
            guard !q.draining else { return false }
            q.draining = true
            return true
        }
        if start { worker.async { [self] in drain() } }
    }

    /// Messages waiting now.
    var waiting: Int { queues.withLock { $0.count } }

    private func drain() {
        while true {
            let (batch, dropped): ([Message], Int) = queues.withLock { q in
                var out: [Message] = []
                out.reserveCapacity(min(q.count, Self.batch))
                while out.count < Self.batch {
                    let urgent = !q.urgent.isEmpty
                    guard let key = urgent ? q.urgent.popFirst() : q.ready.popFirst() else { break }
                    guard var list = q.byDevice.removeValue(forKey: key), let m = list.popFirst() else { continue }
                    out.append(m)
                    q.count -= 1
                    q.bytes -= m.topic.utf8.count + m.payload.count
                    if !list.isEmpty {
                        q.byDevice[key] = list
                        if urgent { q.urgent.append(key) } else { q.ready.append(key) }
                    }
                }
                if out.isEmpty { q.draining = false }
                defer { q.dropped = 0 }
                return (out, q.dropped)
            }
            if batch.isEmpty {
                if dropped > 0 { fold([], dropped) }
                return
            }
            fold(batch, dropped)
        }
    }
}

/// The messages the site took, on their way to ``StationHistory`` (its SQLite file): one worker
/// writes all that waits in one transaction, so a slow disk makes the transactions larger, not
/// the site later. At most ``limit`` wait; past that the oldest are not recorded, counted.
final class StationHistoryWriter: Sendable {
    static let limit = StationInbox.total
    private let pending = Mutex<(messages: [StationInbox.Message], lost: Int, running: Bool)>(([], 0, false))
    private let worker = DispatchQueue(label: "fallguard.station.history")
    private let write: @Sendable ([StationInbox.Message], Int) -> Void

    /// - Parameter write: called on the worker with the messages in order and how many were
    ///   not kept since the last call.
    init(write: @escaping @Sendable ([StationInbox.Message], Int) -> Void) { self.write = write }

    func post(_ messages: [StationInbox.Message]) {
        guard !messages.isEmpty else { return }
        let start: Bool = pending.withLock { p in
            p.messages += messages
            if p.messages.count > Self.limit {
                p.lost += p.messages.count - Self.limit
                p.messages.removeFirst(p.messages.count - Self.limit)
            }
            guard !p.running else { return false }
            p.running = true
            return true
        }
        if start { worker.async { [self] in drain() } }
    }

    /// Messages waiting for the disk now.
    var waiting: Int { pending.withLock { $0.messages.count } }

    private func drain() {
        while true {
            let (messages, lost): ([StationInbox.Message], Int) = pending.withLock { p in
                defer { (p.messages, p.lost) = ([], 0) }
                if p.messages.isEmpty { p.running = false }
                return (p.messages, p.lost)
            }
            if messages.isEmpty { return }
            write(messages, lost)
        }
    }
}
