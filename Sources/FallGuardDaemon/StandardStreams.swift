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

/// A flag that SIGINT or SIGTERM sets, for commands that end cleanly on Ctrl-C; keep the
/// returned sources alive while waiting.
public func stopOnSignals() -> (ManagedAtomic<Bool>, [DispatchSourceSignal]) {
    let stop = ManagedAtomic<Bool>(false)
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: .global()) }
    for s in sources {
        s.setEventHandler { stop.store(true, ordering: .releasing) }
        s.resume()
    }
    return (stop, sources)
}
