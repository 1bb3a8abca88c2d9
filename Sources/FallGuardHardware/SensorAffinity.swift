import FallGuardCore
import Foundation

extension SensorCPU {
    /// Online CPUs now.
    public static var online: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Pins the calling thread to the chosen CPU. Returns a reason when the kernel refused
    /// (the thread then runs anywhere, as before); nil when pinned or when nothing was asked.
    @discardableResult
    public func pinCurrentThread() -> String? {
        guard let cpu = resolved(online: Self.online) else { return nil }
        var set = cpu_set_t()
        guard cpu >= 0, cpu < MemoryLayout<cpu_set_t>.size * 8 else { return "CPU \(cpu) does not exist" }
        withUnsafeMutableBytes(of: &set) { bytes in
            bytes.bindMemory(to: UInt64.self)[cpu / 64] |= 1 << UInt64(cpu % 64)
        }
        // glibc declares sched_setaffinity only under _GNU_SOURCE, which Swift's Glibc module
        // does not define: look it up by name.
        typealias SetAffinity = @convention(c) (pid_t, Int, UnsafePointer<cpu_set_t>) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "sched_setaffinity") else { return "sched_setaffinity is missing" }
        let setAffinity = unsafeBitCast(symbol, to: SetAffinity.self)
        guard setAffinity(0, MemoryLayout<cpu_set_t>.size, &set) == 0 else {
            return "CPU \(cpu): \(String(cString: strerror(errno)))"
        }
        return nil
    }
}
