import Synchronization

/// Who may see the page and label incidents: the logins (session cookies) when a password is
/// set, the anti-forgery tokens for forms, the throttle on wrong passwords (per client, for
/// every place a password is checked), and the Host check that keeps a loopback page from
/// being read through DNS rebinding. Pure: times and clients come in.
public final class WebAccess: Sendable {
    public static let cookieName = "fallguard_session"
    /// Wrong passwords a client may send per ``throttleWindow`` before its checks wait for the window.
    public static let throttleLimit = PasswordThrottle.limit
    public static let throttleWindow = PasswordThrottle.window

    private let password: [UInt8]?
    private let sessionSeconds: Double
    /// The page's form token when no password is set (one per process; a page on another site
    /// cannot read it, so it cannot forge a label).
    private let processToken: String
    private let state = Mutex(State())
    /// Wrong passwords per client; shared by every login of one server (``StaffAccess``).
    public let throttle: PasswordThrottle

    struct Session { var csrf: String; var expires: Double }
    struct State {
        var sessions: [String: Session] = [:]
    }

    public init(password: String?, sessionHours: Double, throttle: PasswordThrottle = PasswordThrottle()) {
        self.password = password.map { Array($0.utf8) }
        self.throttle = throttle
        sessionSeconds = sessionHours * 3600
        processToken = Self.randomToken()
    }

    public var requiresLogin: Bool { password != nil }

    /// 32 random bytes as hex (the system's CSPRNG).
    public static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let b = UInt8.random(in: 0...255, using: &g)
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(b >> 4)], digits[Int(b & 15)]], as: UTF8.self)
        }.joined()
    }

    /// Compares without an early exit, so the time taken says nothing about where they differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }

    public enum PasswordCheck: Equatable, Sendable {
        case right
        case wrong
        /// Too many wrong passwords from this client lately: not compared; try again in this
        /// many seconds. `first`: the first refusal of this wait (the one to log).
        case throttled(seconds: Int, first: Bool)
    }

    /// The one place a password is compared (the login form, HTTP Basic on `/metrics`), throttled
    /// per client (its IP address, see `clientKey` in the daemon): ``throttleLimit`` wrong ones per
    /// ``throttleWindow`` and its further checks are refused unread until the oldest ages out.
    /// Other clients are not held up. Without a password set, nothing is right.
    public func check(password given: String, client: String, now: Double) -> PasswordCheck {
        guard let password else { return .wrong }
        if let wait = throttle.admit(client: client, now: now) { return wait }
        guard Self.constantTimeEqual(Array(given.utf8), password) else {
            throttle.failed(client: client, now: now)
            return .wrong
        }
        return .right
    }

    /// A new session (after a ``check(password:client:now:)`` that was right): its id, for the cookie.
    public func startSession(now: Double) -> String {
        state.withLock { s in
            s.sessions = s.sessions.filter { $0.value.expires > now }
            let id = Self.randomToken()
            s.sessions[id] = Session(csrf: Self.randomToken(), expires: now + sessionSeconds)
            return id
        }
    }

    /// A session as it is kept across a restart (the station's state directory): its id, its
    /// form token and when it ends.
    public struct SavedSession: Sendable, Equatable {
        public var id: String
        public var csrf: String
        public var expires: Double
        public init(id: String, csrf: String, expires: Double) { (self.id, self.csrf, self.expires) = (id, csrf, expires) }
    }

    /// The sessions still valid at `now`, to keep.
    public func savedSessions(now: Double) -> [SavedSession] {
        state.withLock { s in
            s.sessions.filter { $0.value.expires > now }.map { SavedSession(id: $0.key, csrf: $0.value.csrf, expires: $0.value.expires) }
                .sorted { $0.id < $1.id }
        }
    }

    /// Takes back sessions kept before a restart (the expired ones are left out).
    public func restore(_ saved: [SavedSession], now: Double) {
        state.withLock { s in
            for session in saved where session.expires > now && !session.id.isEmpty && !session.csrf.isEmpty {
                s.sessions[session.id] = Session(csrf: session.csrf, expires: session.expires)
            }
        }
    }

    public func logout(session: String?) {
        guard let session else { return }
        _ = state.withLock { $0.sessions.removeValue(forKey: session) }
    }

    /// Whether a request with this session cookie (nil: none) may see the page; with no
    /// password set, every request on the allowed hosts may.
    public func allows(session: String?, now: Double) -> Bool {
        guard password != nil else { return true }
        guard let session else { return false }
        return state.withLock { $0.sessions[session].map { $0.expires > now } ?? false }
    }

    /// The token a form of this session carries (the process's own without a password).
    public func formToken(session: String?, now: Double) -> String? {
        guard password != nil else { return processToken }
        guard let session else { return nil }
        return state.withLock { s in s.sessions[session].flatMap { $0.expires > now ? $0.csrf : nil } }
    }

    /// Whether a form's token is this session's.
    public func acceptsForm(token: String?, session: String?, now: Double) -> Bool {
        guard let token, let expected = formToken(session: session, now: now) else { return false }
        return Self.constantTimeEqual(Array(token.utf8), Array(expected.utf8))
    }

    /// Whether the `Host` header names this server as it may be reached: on a loopback-only
    /// server, exactly a loopback name (`localhost`), an IPv4 literal in 127/8 or `[::1]`, with
    /// an optional port: a page on another site whose name resolves to 127.0.0.1 (even one
    /// named `127.attacker.example`) must not read it. Anything once a password guards the page.
    public func acceptsHost(_ host: String?, loopbackOnly: Bool) -> Bool {
        guard loopbackOnly, password == nil else { return true }
        guard let host else { return false }
        return Self.loopbackName(inHost: host.lowercased())
    }

    /// `name[:port]` or `[v6][:port]` where the name is exactly a loopback one.
    static func loopbackName(inHost h: String) -> Bool {
        var name = Substring(h), port: Substring?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            name = name[name.index(after: name.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.first == ":" else { return false }
                port = rest.dropFirst()
            }
            guard name == "::1" else { return false }
        } else if let colon = name.firstIndex(of: ":") {
            port = name[name.index(after: colon)...]
            name = name[..<colon]
        }
        if let port, port.isEmpty || port.count > 5 || !port.allSatisfy({ $0.isASCII && $0.isNumber }) { return false }
        if name == "localhost" || name == "::1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { o in
            !o.isEmpty && o.count <= 3 && o.allSatisfy { $0.isASCII && $0.isNumber } && Int(o)! <= 255
        }
    }

    /// The `Set-Cookie` value for a session (Secure when served over TLS).
    public func cookie(session: String, secure: Bool) -> String {
        "\(Self.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(sessionSeconds))\(secure ? "; Secure" : "")"
    }

    /// The session id in a `Cookie` header.
    public static func session(inCookieHeader header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let kv = part.trimmingCharacters(in: " ")
            if kv.hasPrefix(cookieName + "=") { return String(kv.dropFirst(cookieName.count + 1)) }
        }
        return nil
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> Substring {
        var s = self
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return s
    }
}
