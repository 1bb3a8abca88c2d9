import Synchronization

/// How many lines of one kind may go to the log a minute (the page's password lines): a client
/// is throttled to a few wrong passwords a minute, but many clients together must not flood the
/// journal, whose rate limit would then drop the lines that matter (a fall, an alert). Lines
/// beyond the budget are counted and reported with the next line let through. Pure: times come in.
public final class LineBudget: Sendable {
    public let perMinute: Int
    private let state = Mutex(State())
    struct State { var windowStart = -Double.infinity; var used = 0; var withheld = 0 }

    public init(perMinute: Int) { self.perMinute = perMinute }

    /// nil: do not log this line; else log it, after saying how many were withheld before it
    /// (the number returned).
    public func take(now: Double) -> Int? {
        state.withLock { s in
            if now - s.windowStart >= 60 { s.windowStart = now; s.used = 0 }
            guard s.used < perMinute else { s.withheld += 1; return nil }
            s.used += 1
            defer { s.withheld = 0 }
            return s.withheld
        }
    }
}
