import Synchronization

/// The threads and loops that must all be alive for the watchdog to be fed: each reports its
/// passes (``pass(_:nowNanoseconds:)``) and may stay silent at most its allowance. `WATCHDOG=1`
/// goes out only while ``stalled(nowNanoseconds:)`` is empty, so systemd restarts a service
/// whose alarm thread or delivery worker hangs as it does one whose sample loop hangs.
public final class Liveness: Sendable {
    private struct Part { var allowance: Int64; var last: Int64 }
    private let parts = Mutex<[String: Part]>([:])

    public init() {}

    /// Starts watching `part`, counting it alive from `nowNanoseconds`.
    public func watch(_ part: String, allowanceNanoseconds: Int64, nowNanoseconds: Int64) {
        parts.withLock { $0[part] = Part(allowance: allowanceNanoseconds, last: nowNanoseconds) }
    }

    /// `part` went round its loop.
    public func pass(_ part: String, nowNanoseconds: Int64) {
        parts.withLock { $0[part]?.last = nowNanoseconds }
    }

    /// Stops watching `part` (it ended on purpose).
    public func forget(_ part: String) {
        parts.withLock { $0[part] = nil }
    }

    /// The parts silent past their allowance, with the seconds since their last pass, by name.
    public func stalled(nowNanoseconds: Int64) -> [(part: String, silentSeconds: Double)] {
        parts.withLock { parts in
            parts.filter { nowNanoseconds - $0.value.last > $0.value.allowance }
                .map { (part: $0.key, silentSeconds: Double(nowNanoseconds - $0.value.last) * 1e-9) }
                .sorted { $0.part < $1.part }
        }
    }
}
