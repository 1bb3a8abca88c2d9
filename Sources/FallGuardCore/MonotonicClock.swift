#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's one clock for durations and schedules: CLOCK_MONOTONIC, the clock the kernel
/// stamps IIO samples and GPIO edges with, so the emulators, the drivers and FallGuard's own
/// stamps compare directly. Wall-clock time (incident ids, messages) is Foundation's `Date`.
public enum MonotonicClock {
    /// Now, in nanoseconds.
    @inline(__always)
    public static func nanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Now, in seconds.
    @inline(__always)
    public static func seconds() -> Double { Double(nanoseconds()) * 1e-9 }

    /// Sleeps until an absolute time in nanoseconds on this clock (no drift from repeated
    /// relative sleeps); a signal does not cut it short.
    public static func sleep(until nanoseconds: Int64) {
        var ts = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
