import Synchronization

/// Wrong passwords per client: ``limit`` within ``window`` seconds and that client's further
/// checks are refused unread until its oldest wrong one ages out. Pure: times and clients come in.
///
/// The table holds at most ``capacity`` clients. When it is full, a new client that fails takes
/// the place of the client whose last wrong password is oldest: a flood from thousands of
/// addresses cannot grow the table, and never makes anyone share a throttle. A client that has
/// not sent a wrong password within the window is never throttled. One throttle serves every
/// login of a server (the station's staff): what a client is told never depends on the user
/// name it tried, so names cannot be told apart by their answers.
public final class PasswordThrottle: Sendable {
    /// Wrong passwords a client may send per ``window`` before its checks wait.
    public static let limit = 5
    /// This throttle's: ``limit`` unless given (a count across clients allows more).
    public let allowed: Int
    public static let window = 60.0
    /// Clients whose wrong passwords are remembered.
    public let capacity: Int

    struct Failures { var times: [Double] = []; var reported = false }
    private let table: Mutex<[String: Failures]>

    public convenience init(capacity: Int = 4096) { self.init(capacity: capacity, limit: Self.limit) }

    /// `limit` wrong passwords a ``window`` (a count across clients may allow more).
    public init(capacity: Int, limit: Int) {
        self.capacity = max(1, capacity)
        self.allowed = max(1, limit)
        table = Mutex([:])
    }

    /// Whether `client` may have a password compared now; `.throttled` with the seconds until it
    /// may (`first`: the first refusal of this wait, the one to log).
    public func admit(client: String, now: Double) -> WebAccess.PasswordCheck? {
        table.withLock { t in
            guard var f = t[client] else { return nil }
            f.times.removeAll { $0 < now - Self.window }
            guard f.times.count >= allowed else {
                t[client] = f.times.isEmpty ? nil : f
                return nil
            }
            let first = !f.reported
            f.reported = true
            t[client] = f
            return .throttled(seconds: max(1, Int((f.times[0] + Self.window - now).rounded(.up))), first: first)
        }
    }

    /// A wrong password from `client` at `now`.
    public func failed(client: String, now: Double) {
        table.withLock { t in
            if t[client] == nil, t.count >= capacity {
                // Forget the clients whose window is over; if none, the one idle longest.
                t = t.filter { $0.value.times.contains { $0 >= now - Self.window } }
                if t.count >= capacity, let idlest = t.min(by: { ($0.value.times.last ?? 0) < ($1.value.times.last ?? 0) }) {
                    t[idlest.key] = nil
                }
            }
            var f = t[client] ?? Failures()
            f.times.removeAll { $0 < now - Self.window }
            if f.times.isEmpty { f.reported = false }
            f.times.append(now)
            t[client] = f
        }
    }

    /// Clients remembered now (for tests).
    public var count: Int { table.withLock { $0.count } }
}
