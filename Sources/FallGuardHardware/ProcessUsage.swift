import Glibc

/// This process's CPU time and peak resident memory, from `getrusage(2)`: what the benches
/// and the daemon's metrics report against the "≤ 1 % of one core, ≤ 30 MB" budget.
public struct ProcessUsage: Sendable, Equatable {
    /// User plus system CPU time of all threads, in seconds.
    public var cpuSeconds: Double
    /// Peak resident set size (`ru_maxrss`), in KiB.
    public var maxResidentKiB: Int

    public static func current() -> ProcessUsage {
        var u = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
        let cpu = Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec)
            + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6
        return ProcessUsage(cpuSeconds: cpu, maxResidentKiB: Int(u.ru_maxrss))
    }
}
