import FallGuardCore

/// The signal around each incident, assembled from the 40 Hz stream the detector sees: the
/// last `before` seconds kept in memory (so an incident has its lead-up with recording off),
/// then `after` seconds more once the event is known. Windows are counted in samples at the
/// detector's rate (`before` s = `before` × 40 samples), as the detector counts them, so a
/// stream played faster than real time (a bench at 60×) keeps the same signal. Pure: fed
/// samples and events, it hands back each incident's signal when its window is complete.
public struct IncidentSignalBuffer: Sendable {
    public typealias Window = (id: String, event: Double, samples: [AccelerationSample])

    public let beforeCount: Int
    public let afterCount: Int
    /// Samples of history kept beyond `before`: a detection reaches the buffer after its
    /// impact by up to 6 s of samples (the long look) plus the threads' hand-over, which a
    /// stream played at 60× fills with many more (120 s at 40 Hz: 150 kB).
    public static let latenessCount = Int(120 * detectorRate)

    private var history: [AccelerationSample]
    private var head = 0
    private var filled = 0
    private var open: [(id: String, event: Double, samples: [AccelerationSample], remaining: Int)] = []

    public init(before: Double, after: Double, rate: Double = detectorRate) {
        beforeCount = Int((before * rate).rounded())
        afterCount = Int((after * rate).rounded())
        history = [AccelerationSample](repeating: AccelerationSample(time: 0, x: 0, y: 0, z: 0),
                                       count: max(1, beforeCount + Self.latenessCount))
    }

    /// The windows still filling, with their signal so far (written as they go, so that a
    /// power cut keeps what came before it).
    public var pending: [Window] { open.map { ($0.id, $0.event, $0.samples) } }

    /// Starts the signal of incident `id` centred on `eventTime` (stream seconds): up to
    /// `before` × rate samples before the first sample at or after it, that sample, and what
    /// history already holds after it. An id already open is left as it is.
    public mutating func begin(_ id: String, eventTime: Double) {
        guard !open.contains(where: { $0.id == id }) else { return }
        let held = (0..<filled).map { history[(head - filled + $0 + history.count) % history.count] }
        let eventIndex = held.firstIndex { $0.time >= eventTime } ?? held.count
        let kept = Array(held[max(0, eventIndex - beforeCount)...])
        let after = held.count - eventIndex
        open.append((id, eventTime, kept, max(0, afterCount + 1 - after)))
        if afterCount + 1 - after <= 0 { open[open.count - 1].samples.removeLast(after - afterCount - 1) }
    }

    /// Takes one sample; returns the windows it completed (at most `after` × rate samples past
    /// the event's), with their signal.
    public mutating func append(_ s: AccelerationSample) -> [Window] {
        history[head] = s
        head = (head + 1) % history.count
        filled = min(filled + 1, history.count)
        guard !open.isEmpty else { return [] }
        var done: [Window] = []
        var i = 0
        while i < open.count {
            if open[i].remaining > 0 {
                open[i].samples.append(s)
                open[i].remaining -= 1
            }
            if open[i].remaining == 0 {
                let w = open.remove(at: i)
                done.append((w.id, w.event, w.samples))
            } else {
                i += 1
            }
        }
        return done
    }

    /// Every window as it stands, closed (at a stop).
    public mutating func finishAll() -> [Window] {
        defer { open.removeAll() }
        return pending
    }
}
