#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum FileHandleStderr {
    /// Unbuffered write to file descriptor 2.
    static func write(_ s: String) {
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
func flushStandardOutput() { fflush(nil) }
