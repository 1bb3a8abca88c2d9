import FallGuardWeb

/// Who may use the station page: each member of staff with their own login (a ``WebAccess``
/// each: sessions, form tokens and the wrong-password throttle of the bridge's page), so that
/// an acknowledgement from the page names the person who sent it; and, when a display key is
/// set, wall or kiosk displays, which see everything without a personal session and acknowledge
/// with a member's short PIN. Every session can be kept across a restart
/// (``savedSessions(now:)``, ``restore(_:now:)``). Pure: times and clients come in.
public final class StaffAccess: Sendable {
    public struct Member: Sendable, Equatable {
        public let user: String
        /// The name the bridges show as who answered.
        public let name: String
    }

    /// Who a session is: a member of staff, or a display (a wall or kiosk screen).
    public enum Viewer: Sendable, Equatable {
        case member(Member)
        case display
    }

    private let members: [String: (member: Member, access: WebAccess)]
    /// Each member's PIN for acknowledging on a display (members without one cannot there).
    private let pins: [(pin: [UInt8], member: Member)]
    /// Answers for user names nobody has, with the same throttle and timing as a real one.
    private let nobody: WebAccess
    /// The displays' sessions, opened with the display key (nil: no display mode).
    private let displays: WebAccess?
    /// The exact loopback Host check, whatever the logins.
    private let hostCheck = WebAccess(password: nil, sessionHours: 1)

    /// One throttle for every login, display key and PIN: a client's wrong guesses count
    /// together whatever it tried, so a name nobody has answers exactly as a real one does.
    public let throttle: PasswordThrottle

    /// `pins`: user → PIN; `displayKey`: the secret a display opens its session with (nil: no
    /// display mode), `displayHours` how long that session lasts; `throttle`: the one before a
    /// reload (the wrong guesses so far still count).
    public init(staff: [(user: String, name: String, password: String)], sessionHours: Double,
                pins: [String: String] = [:], displayKey: String? = nil, displayHours: Double = 24 * 366,
                throttle: PasswordThrottle = PasswordThrottle()) {
        self.throttle = throttle
        var m: [String: (member: Member, access: WebAccess)] = [:]
        for s in staff {
            m[s.user.lowercased()] = (Member(user: s.user, name: s.name),
                                      WebAccess(password: s.password, sessionHours: sessionHours, throttle: throttle))
        }
        members = m
        self.pins = pins.compactMap { user, pin in m[user.lowercased()].map { (Array(pin.utf8), $0.member) } }
        nobody = WebAccess(password: WebAccess.randomToken(), sessionHours: sessionHours, throttle: throttle)
        displays = displayKey.map { WebAccess(password: $0, sessionHours: displayHours, throttle: throttle) }
    }

    /// Whether displays may open a session (a display key is set).
    public var hasDisplays: Bool { displays != nil }

    /// Checks `user`'s password from `client` (throttled per client, as the bridge's page);
    /// the member when it is right.
    public func check(user: String, password: String, client: String, now: Double) -> (WebAccess.PasswordCheck, Member?) {
        guard let entry = members[user.lowercased()] else {
            let result = nobody.check(password: password, client: client, now: now)
            return (result == .right ? .wrong : result, nil)
        }
        let result = entry.access.check(password: password, client: client, now: now)
        return (result, result == .right ? entry.member : nil)
    }

    /// Checks a display key from `client` (the same throttle); without display mode, never right.
    public func checkDisplay(key: String, client: String, now: Double) -> WebAccess.PasswordCheck {
        guard let displays else {
            let result = nobody.check(password: key, client: client, now: now)
            return result == .right ? .wrong : result
        }
        return displays.check(password: key, client: client, now: now)
    }

    /// The member whose PIN this is, for a step taken on the display `session`: compared with
    /// every PIN without an early exit, wrong ones throttled per display session (issue 37: a
    /// kiosk's wrong PINs lock out that screen for a minute, never every display and member
    /// behind the same address), apart from the passwords' per-client count. The wrong PINs of
    /// all display sessions together are counted too, ``sitePINLimit`` a minute: whoever holds
    /// the display key could open sessions without end and guess in parallel (a 4-digit PIN
    /// among 20 staff falls in 500 guesses); past it the displays take no PIN for the rest of
    /// the minute (staff acknowledge on their phones meanwhile).
    public func member(pin given: String, session: String, now: Double) -> (WebAccess.PasswordCheck, Member?) {
        let client = Self.pinCounter(session: session)
        if let wait = throttle.admit(client: client, now: now) { return (wait, nil) }
        if let wait = sitePINs.admit(client: Self.sitePINCounter, now: now) { return (wait, nil) }
        let bytes = Array(given.utf8)
        var found: Member?
        for entry in pins where WebAccess.constantTimeEqual(bytes, entry.pin) { found = entry.member }
        guard let found, !bytes.isEmpty else {
            throttle.failed(client: client, now: now)
            sitePINs.failed(client: Self.sitePINCounter, now: now)
            return (.wrong, nil)
        }
        return (.right, found)
    }

    /// Where a display session's wrong PINs are counted in the throttle: never a client address
    /// (a part of the session id, which the throttle's table keeps in memory only).
    static func pinCounter(session: String) -> String { "display-session " + session.prefix(24) }

    /// Wrong display PINs a minute, all display sessions together.
    public static let sitePINLimit = 20
    static let sitePINCounter = "display-pins"
    /// The site-wide count of wrong display PINs (``sitePINLimit`` a minute).
    private let sitePINs = PasswordThrottle(capacity: 1, limit: StaffAccess.sitePINLimit)

    /// A new session for `member` (after a right ``check(user:password:client:now:)``).
    public func startSession(for member: Member, now: Double) -> String {
        members[member.user.lowercased()]!.access.startSession(now: now)
    }

    /// A new display session (after a right ``checkDisplay(key:client:now:)``).
    public func startDisplaySession(now: Double) -> String? { displays?.startSession(now: now) }

    /// The member whose session this is (nil: none, expired, or a display's).
    public func member(session: String?, now: Double) -> Member? {
        guard case let .member(m)? = viewer(session: session, now: now) else { return nil }
        return m
    }

    /// Who this session is (nil: none, or expired).
    public func viewer(session: String?, now: Double) -> Viewer? {
        guard let session else { return nil }
        if let m = members.values.first(where: { $0.access.allows(session: session, now: now) })?.member { return .member(m) }
        return displays?.allows(session: session, now: now) == true ? .display : nil
    }

    private var accesses: [WebAccess] { members.values.map(\.access) + (displays.map { [$0] } ?? []) }

    public func formToken(session: String?, now: Double) -> String? {
        guard let session else { return nil }
        return accesses.lazy.compactMap { $0.formToken(session: session, now: now) }.first
    }

    public func acceptsForm(token: String?, session: String?, now: Double) -> Bool {
        accesses.contains { $0.acceptsForm(token: token, session: session, now: now) }
    }

    public func logout(session: String?) {
        for access in accesses { access.logout(session: session) }
    }

    /// Every session still valid, with whose it is (a user, or nil: a display's), to keep across
    /// a restart.
    public func savedSessions(now: Double) -> [(user: String?, session: WebAccess.SavedSession)] {
        members.sorted { $0.key < $1.key }.flatMap { user, entry in entry.access.savedSessions(now: now).map { (Optional(user), $0) } }
            + (displays?.savedSessions(now: now).map { (nil, $0) } ?? [])
    }

    /// Takes back the sessions kept before a restart: those of members no longer listed, and
    /// displays' when display mode is off, are left out. Returns how many were taken.
    @discardableResult
    public func restore(_ saved: [(user: String?, session: WebAccess.SavedSession)], now: Double) -> Int {
        var taken = 0
        for (user, session) in saved where session.expires > now {
            let access = user == nil ? displays : members[user!.lowercased()]?.access
            guard let access else { continue }
            access.restore([session], now: now)
            taken += 1
        }
        return taken
    }

    /// On a loopback-only station, the Host header must name loopback exactly (DNS rebinding).
    public func acceptsHost(_ host: String?, loopbackOnly: Bool) -> Bool {
        hostCheck.acceptsHost(host, loopbackOnly: loopbackOnly)
    }

    public func cookie(session: String, secure: Bool, display: Bool = false) -> String {
        ((display ? displays : nil) ?? members.values.first?.access ?? nobody).cookie(session: session, secure: secure)
    }
}
