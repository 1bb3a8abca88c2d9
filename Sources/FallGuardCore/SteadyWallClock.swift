import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Unix time that never jumps: the wall clock read once, then carried forward by the monotonic
/// clock. A Pi has no real-time clock; it boots with the time it last saved and NTP then steps
/// the wall clock, by days at times, in either direction. What the outbox schedules (a retry in
/// 30 s, an escalation after 5 minutes, a countdown's fallback) is kept on this clock, so a
/// step neither fires it at once nor holds it back an hour.
///
/// A step is seen as the wall clock minus the monotonic clock moving (``step(tolerance:)``);
/// whoever keeps times on this clock moves them by the step and then ``follow(_:)``s it, so
/// the clock and the times stay in one timeline and come back to the true time of day. NTP's
/// slewing (at most 0.5 ms a second) only moves it by a second after half an hour or more.
public final class SteadyWallClock: Sendable {
    /// The wall clock (Unix seconds) and the monotonic clock (seconds); a test steps the first.
    public let wall: @Sendable () -> Double
    public let monotonic: @Sendable () -> Double
    private let anchor: Mutex<(wall: Double, monotonic: Double)>

    public init(wall: @escaping @Sendable () -> Double = SteadyWallClock.systemWall,
                monotonic: @escaping @Sendable () -> Double = { MonotonicClock.seconds() }) {
        (self.wall, self.monotonic) = (wall, monotonic)
        anchor = Mutex((wall(), monotonic()))
    }

    /// Now, Unix seconds, on this clock.
    public func now() -> Double {
        let a = anchor.withLock { $0 }
        return a.wall + (monotonic() - a.monotonic)
    }

    /// How far the wall clock has been stepped away from this clock, when more than
    /// `tolerance` seconds (positive: forward); nil otherwise.
    public func step(tolerance: Double = 1) -> Double? {
        let d = wall() - now()
        return abs(d) > tolerance ? d : nil
    }

    /// Takes the step `delta` (the times kept on this clock were moved by it).
    public func follow(_ delta: Double) {
        anchor.withLock { $0.wall += delta }
    }

    /// CLOCK_REALTIME in seconds.
    public static let systemWall: @Sendable () -> Double = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
