import Atomics
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The watchdog systemd set up for this process (`WatchdogSec=`), from `$WATCHDOG_USEC` and
/// `$WATCHDOG_PID`, as `sd_watchdog_enabled(3)` reads them.
public struct WatchdogInterval: Sendable, Equatable {
    /// systemd's timeout, in microseconds.
    public let timeoutMicroseconds: UInt64

    /// Nil when there is no watchdog, or it belongs to another process (`$WATCHDOG_PID` set
    /// to another pid, e.g. a child that inherited the environment).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()) {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], Int32(owner) != pid { return nil }
        timeoutMicroseconds = usec
    }

    public init(timeoutMicroseconds: UInt64) {
        self.timeoutMicroseconds = timeoutMicroseconds
    }

    /// How often to ping: half the timeout, as systemd recommends, so one late ping is not fatal.
    public var pingIntervalNanoseconds: Int64 { Int64(min(timeoutMicroseconds, UInt64(Int64.max / 1000))) * 500 }
}

/// Sends `WATCHDOG=1` at most once per ping interval however often ``tick(nowNanoseconds:)`` is
/// called: call it on every pass of the sample loop (40 Hz); only a loop that keeps running
/// keeps the service alive, and only while every part ``liveness`` watches is alive too. Safe
/// to call from any thread.
public final class WatchdogPinger: Sendable {
    private let notifier: SystemdNotifier
    public let interval: WatchdogInterval
    /// The other parts that must be alive (the alarm thread, the delivery worker).
    public let liveness: Liveness
    private let lastPing = ManagedAtomic<Int64>(Int64.min)

    public init(notifier: SystemdNotifier, interval: WatchdogInterval, liveness: Liveness = Liveness()) {
        (self.notifier, self.interval, self.liveness) = (notifier, interval, liveness)
    }

    /// The pinger systemd asked for, or nil when the unit has no watchdog or no notify socket.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment,
                                       liveness: Liveness = Liveness()) throws(SystemdNotifyError) -> WatchdogPinger? {
        guard let interval = WatchdogInterval(environment: environment),
              let notifier = try SystemdNotifier.fromEnvironment(environment) else { return nil }
        return WatchdogPinger(notifier: notifier, interval: interval, liveness: liveness)
    }

    /// Pings when the interval has passed since the last ping and no watched part has
    /// stalled; returns true when it sent one.
    @discardableResult
    public func tick(nowNanoseconds: Int64) throws(SystemdNotifyError) -> Bool {
        guard liveness.stalled(nowNanoseconds: nowNanoseconds).isEmpty else { return false }
        let last = lastPing.load(ordering: .relaxed)
        guard last == Int64.min || nowNanoseconds - last >= interval.pingIntervalNanoseconds else { return false }
        guard lastPing.compareExchange(expected: last, desired: nowNanoseconds, ordering: .relaxed).exchanged else { return false }
        try notifier.watchdog()
        return true
    }
}
