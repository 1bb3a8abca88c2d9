import FallGuardWeb

/// Who may use the station page: each member of staff with their own login (a ``WebAccess``
/// each: sessions, form tokens and the wrong-password throttle of the bridge's page), so that
/// an acknowledgement from the page names the person who sent it. Pure: times and clients come in.
public final class StaffAccess: Sendable {
    public struct Member: Sendable, Equatable {
        public let user: String
        /// The name the bridges show as who answered.
        public let name: String
    }

    private let members: [String: (member: Member, access: WebAccess)]
    /// Answers for user names nobody has, with the same throttle and timing as a real one.
    private let nobody: WebAccess
    /// The exact loopback Host check, whatever the logins.
    private let hostCheck = WebAccess(password: nil, sessionHours: 1)

    /// One throttle for every login: a client's wrong passwords count together whatever user
    /// names it tried, so a name nobody has answers exactly as a real one does.
    public let throttle: PasswordThrottle

    public init(staff: [(user: String, name: String, password: String)], sessionHours: Double) {
        let throttle = PasswordThrottle()
        self.throttle = throttle
        var m: [String: (member: Member, access: WebAccess)] = [:]
        for s in staff {
            m[s.user.lowercased()] = (Member(user: s.user, name: s.name),
                                      WebAccess(password: s.password, sessionHours: sessionHours, throttle: throttle))
        }
        members = m
        nobody = WebAccess(password: WebAccess.randomToken(), sessionHours: sessionHours, throttle: throttle)
    }

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

    /// A new session for `member` (after a right ``check(user:password:client:now:)``).
    public func startSession(for member: Member, now: Double) -> String {
        members[member.user.lowercased()]!.access.startSession(now: now)
    }

    /// The member whose session this is (nil: none, or expired).
    public func member(session: String?, now: Double) -> Member? {
        guard let session else { return nil }
        return members.values.first { $0.access.allows(session: session, now: now) }?.member
    }

    public func formToken(session: String?, now: Double) -> String? {
        guard let session else { return nil }
        return members.values.lazy.compactMap { $0.access.formToken(session: session, now: now) }.first
    }

    public func acceptsForm(token: String?, session: String?, now: Double) -> Bool {
        members.values.contains { $0.access.acceptsForm(token: token, session: session, now: now) }
    }

    public func logout(session: String?) {
        for entry in members.values { entry.access.logout(session: session) }
    }

    /// On a loopback-only station, the Host header must name loopback exactly (DNS rebinding).
    public func acceptsHost(_ host: String?, loopbackOnly: Bool) -> Bool {
        hostCheck.acceptsHost(host, loopbackOnly: loopbackOnly)
    }

    public func cookie(session: String, secure: Bool) -> String {
        (members.values.first?.access ?? nobody).cookie(session: session, secure: secure)
    }
}
