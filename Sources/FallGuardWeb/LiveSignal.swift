import Atomics
import FallGuardCore
import Synchronization

/// The last minute of |a| (and |ω| from a sensor with a gyroscope) for the page's live plot. The sample thread offers every 40 Hz
/// sample the detector sees; while no page is open (``viewers`` is 0) that is one relaxed
/// atomic load and nothing else. A page's stream holds a ``Viewer`` for as long as it runs.
public final class LiveSignal: Sendable {
    /// One sample as the page gets it: the wall-clock time it was captured, in ms since 1970,
    /// |a| in mg and |ω| in °/s (-1: the sample has no gyroscope reading).
    public struct Point: Sendable, Equatable {
        public var sequence: Int
        public var wallMilliseconds: Int64
        public var milliG: Int32
        public var degreesPerSecond: Int32 = -1
    }

    public static let seconds = 60.0
    private let capacity: Int
    private let ring: Mutex<Ring>
    private let viewerCount = ManagedAtomic<Int>(0)

    struct Ring {
        var points: [Point] = []
        var next = 0          // sequence of the next point
        var start = 0         // index of the oldest point in `points` once full
    }

    public init(rate: Double = 40) {
        capacity = Int(Self.seconds * rate)
        ring = Mutex(Ring())
    }

    /// Pages open now.
    public var viewers: Int { viewerCount.load(ordering: .relaxed) }

    /// From the sample thread. `monotonicNow` and `wallNow` (seconds) convert the sample's
    /// monotonic capture time to the wall clock.
    @inline(__always)
    public func offer(_ sample: AccelerationSample, monotonicNow: @autoclosure () -> Double, wallNow: @autoclosure () -> Double) {
        guard viewerCount.load(ordering: .relaxed) > 0 else { return }
        let age = min(max(monotonicNow() - sample.time, 0), 5)
        let wall = Int64(((wallNow() - age) * 1000).rounded())
        let mg = Int32(max(min(sample.magnitude * 1000, 1e6), 0).rounded())
        let dps = sample.gyro.map { Int32(max(min($0.magnitude, 1e6), 0).rounded()) } ?? -1
        ring.withLock { r in
            let p = Point(sequence: r.next, wallMilliseconds: wall, milliG: mg, degreesPerSecond: dps)
            r.next += 1
            if r.points.count < capacity {
                r.points.append(p)
            } else {
                r.points[r.start] = p
                r.start = (r.start + 1) % capacity
            }
        }
    }

    /// Points with a sequence of `after` or later (all held when older ones are gone), oldest first,
    /// and the sequence to ask for next.
    public func points(from after: Int) -> (points: [Point], next: Int) {
        ring.withLock { r in
            let count = r.points.count
            let oldest = r.next - count
            let first = max(after, oldest)
            guard first < r.next else { return ([], r.next) }
            var out: [Point] = []
            out.reserveCapacity(r.next - first)
            for s in first..<r.next {
                let offset = s - oldest
                out.append(r.points[count < capacity ? offset : (r.start + offset) % capacity])
            }
            return (out, r.next)
        }
    }

    /// Holds the tap open while alive (one per stream).
    public final class Viewer: Sendable {
        let signal: LiveSignal
        init(_ signal: LiveSignal) {
            self.signal = signal
            signal.viewerCount.wrappingIncrement(ordering: .relaxed)
        }
        deinit {
            if signal.viewerCount.wrappingDecrementThenLoad(ordering: .relaxed) == 0 {
                signal.ring.withLock { $0.points.removeAll(); $0.start = 0 }   // nothing kept while nobody looks
            }
        }
    }

    public func viewer() -> Viewer { Viewer(self) }
}
