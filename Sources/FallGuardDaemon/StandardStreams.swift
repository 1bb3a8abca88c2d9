import Atomics
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum FileHandleStderr {
    /// Unbuffered write to file descriptor 2.
    public static func write(_ s: String) {
        var s = s
        s.withUTF8 { b in
            var off = 0
            while off < b.count {
                let n = Glibc.write(2, b.baseAddress! + off, b.count - off)
                if n <= 0 { return }
                off += n
            }
        }
    }
}

/// Flushes standard output (used by real-time output so lines appear as they happen).
public func flushStandardOutput() { fflush(nil) }

/// A flag that SIGINT or SIGTERM sets, for commands that end cleanly on Ctrl-C. A plain signal
/// handler, not a dispatch source: a command that never touches libdispatch's worker pool (watch)
/// is spared the pool monitor's wake-up every second. The list is empty (kept for the callers,
/// which cancel it).
public func stopOnSignals() -> (ManagedAtomic<Bool>, [DispatchSourceSignal]) {
    let stop = signalledStop
    stop.store(false, ordering: .releasing)
    for s in [SIGINT, SIGTERM] {
        signal(s) { _ in signalledStop.store(true, ordering: .releasing) }
    }
    return (stop, [])
}

/// Set from the signal handler (initialised before a handler is installed).
private let signalledStop = ManagedAtomic<Bool>(false)
