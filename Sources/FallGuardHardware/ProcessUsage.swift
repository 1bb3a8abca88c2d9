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

extension ProcessUsage {
    /// Seconds since this process was started (exec), from `/proc/self/stat`'s start time and
    /// CLOCK_BOOTTIME (10 ms resolution); nil where /proc is missing.
    public static func secondsSinceStart() -> Double? {
        guard let f = fopen("/proc/self/stat", "r") else { return nil }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), f) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Fields after the command name (which may hold spaces) start after the last ')'.
        guard let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }   // field 22: starttime
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        let boot = Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
        return boot - ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
