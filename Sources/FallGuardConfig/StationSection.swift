import FallGuardConfigKeys
import FallGuardCore
import FallGuardMQTT
import FallGuardNotify
import Foundation

/// `station:` — the staff station (`fallguard station`): a site's broker, the page's address,
/// the staff with their own logins, the secret the bridges' acknowledgements are proven with,
/// and optionally who lives where. A file of its own (`/etc/fallguard/station.yaml`).
///
/// ```yaml
/// station:
///   broker: {host: broker.rosewood.example, tls: true, ca-file: /etc/fallguard/site-ca.pem,
///            username: station, password: ${STATION_MQTT_PASSWORD}}
///   listen: 127.0.0.1:8470                   # beyond this machine: tls-certificate and tls-key
///   site-key: ${FALLGUARD_SITE_KEY}          # each bridge's key derived from it (fallguard station --bridge-key)
///   acknowledge-secret: ${FALLGUARD_ACK_SECRET}   # or: one acknowledge-secret for every bridge (before site-key)
///   acknowledge-secrets: {room-012: ...}     # a bridge with its own
///   staff:
///     - {user: anna, name: Anna Smith, password: ...}   # in the credentials file
///   residents:
///     room-012: {wearer: Margaret, location: "Room 12, first floor"}
///   session-hours: 12
///   state-directory: /var/lib/fallguard-station   # the past incidents (station.sqlite)
///   history-days: 7                          # how long the past incidents are kept
/// ```
public struct StationSection: KeyedSection, Equatable {
    public struct Broker: KeyedSection, Codable, Equatable, Sendable {
        public var host = "localhost"
        public var port: Int?
        public var tls = false
        public var caFile: String?
        public var certFile: String?
        public var keyFile: String?
        public var username: String?
        public var password: String?
        public var topicPrefix = "fallguard"
        public var clientID: String?
        /// The login of the station's second connection, which reads only the residents' bridges
        /// (issue 40: a flood of other bridges, read in order on one connection, held their
        /// alarms back). Without a `username` (an anonymous broker) it needs none; a broker that
        /// makes each login's client id its user name (`use_username_as_clientid`) needs a
        /// second login for it: without one, the station keeps to one connection.
        public var residentsUsername: String?
        public var residentsPassword: String?
        /// 5 s (the least allowed): a broker that hangs, or a network that drops without a reset,
        /// is noticed within 2 × keepalive (libmosquitto pings after keepalive seconds without a
        /// word and gives up after as many again); a broker that stops closes the socket: at once.
        public var keepalive = 5

        public init() {}

        public static var keys: [ConfigKey<Self>] {
            [.value("host", \.host), .optional("port", \.port, in: 1...65_535), .value("tls", \.tls),
             .optional("ca-file", \.caFile, nullWhenUnset: false), .optional("cert-file", \.certFile, nullWhenUnset: false),
             .optional("key-file", \.keyFile, nullWhenUnset: false), .optional("username", \.username, nullWhenUnset: false),
             .optional("password", \.password, secret: true, nullWhenUnset: false), .value("topic-prefix", \.topicPrefix),
             .optional("client-id", \.clientID, nullWhenUnset: false), .value("keepalive", \.keepalive, in: 5...3_600, unit: " s"),
             .optional("residents-username", \.residentsUsername, nullWhenUnset: false),
             .optional("residents-password", \.residentsPassword, secret: true, nullWhenUnset: false)]
        }

        /// As the MQTT module's settings (the bridge's keys the station shares).
        public var settings: MQTTChannelSettings {
            MQTTChannelSettings(host: host, port: port, username: username, password: password, clientID: clientID,
                                topicPrefix: topicPrefix, discovery: false, keepalive: keepalive,
                                tls: tls, caFile: caFile, certFile: certFile, keyFile: keyFile)
        }

        /// The residents' connection's settings, or nil when the station keeps to one connection.
        public var residentsSettings: MQTTChannelSettings? {
            guard username == nil || residentsUsername != nil else { return nil }
            var s = settings
            if residentsUsername != nil { (s.username, s.password) = (residentsUsername, residentsPassword) }
            return s
        }
    }

    public struct Staff: KeyedSection, Codable, Equatable, Sendable {
        public var user = ""
        public var name = ""
        public var password = ""
        /// Key `pin`: 4 to 8 digits, to acknowledge on a display (``StationSection/displayKey``)
        /// in this member's name; none: they cannot acknowledge there.
        public var pin: String?

        public init() {}
        public init(user: String, name: String, password: String, pin: String? = nil) {
            (self.user, self.name, self.password, self.pin) = (user, name, password, pin)
        }

        public static var keys: [ConfigKey<Self>] {
            [.value("user", \.user, required: true), .value("name", \.name, required: true),
             .value("password", \.password, secret: true, required: true),
             .optional("pin", \.pin, secret: true, nullWhenUnset: false)]
        }
    }

    public struct Resident: KeyedSection, Codable, Equatable, Sendable {
        public var wearer: String?
        public var location: String?
        /// Key `floor`: the floor or wing (`ground`, `east wing`): the page's filter, the shifts'
        /// assignments, the incidents' CSV.
        public var floor: String?

        public init() {}

        public static var keys: [ConfigKey<Self>] {
            [.optional("wearer", \.wearer, nullWhenUnset: false), .optional("location", \.location, nullWhenUnset: false),
             .optional("floor", \.floor, nullWhenUnset: false)]
        }
    }

    /// `shifts:` — a shift (local time `from`-`to`, across midnight when `to` is earlier) and
    /// which floors each member of staff looks after in it (`floors: {anna: [ground, first]}`):
    /// their page shows those floors first, and the incidents' CSV names the shift.
    public struct Shift: KeyedSection, Codable, Equatable, Sendable {
        public var name = ""
        public var from = ""
        public var to = ""
        /// User → the floors (the residents' `floor`) they look after in this shift.
        public var floors: [String: [String]] = [:]

        public init() {}
        public init(name: String, from: String, to: String, floors: [String: [String]] = [:]) {
            (self.name, self.from, self.to, self.floors) = (name, from, to, floors)
        }

        /// `from`-`to` (nil: malformed, a problem of the file).
        public var window: DailyWindow? {
            guard let a = LocalTime(parsing: from), let b = LocalTime(parsing: to), a != b else { return nil }
            return DailyWindow(start: a, end: b)
        }

        public static var keys: [ConfigKey<Self>] {
            [.value("name", \.name, required: true), .value("from", \.from, required: true), .value("to", \.to, required: true),
             .value("floors", \.floors)]
        }
    }

    /// The first of `shifts` whose hours hold `time` (local).
    public static func shift(at time: LocalTime, in shifts: [Shift]) -> Shift? { shifts.first { $0.window?.contains(time) == true } }

    /// The floors the residents are on, sorted.
    public var floors: [String] { Set(residents.values.compactMap(\.floor)).sorted() }

    /// `escalation:` — the steps of a call (issue 37 item 4): accepted ("I'm going", the
    /// acknowledgement) within `accept-within` seconds of the alarm, presence at the bedside
    /// ("I'm here") within `presence-within` seconds of the acceptance, else it escalates: every
    /// page's louder tone, and the `on-call` contact through the station's own `channels`. A
    /// call still late `escalate-again-after` seconds later (0: never) escalates once more, to
    /// the `senior` contact (the on-call contact again without one).
    public struct Escalation: KeyedSection, Equatable, Sendable {
        public var acceptWithin = 60.0
        public var presenceWithin = 300.0
        public var onCall: OnCall?
        public var escalateAgainAfter = 0.0
        public var senior: OnCall?

        public init() {}

        /// Who the second tier tells: the senior contact, else the on-call contact again.
        public var secondTier: OnCall? { senior ?? onCall }

        public static var keys: [ConfigKey<Self>] {
            [.value("accept-within", \.acceptWithin, in: 10...3_600, unit: " s"),
             .value("presence-within", \.presenceWithin, in: 30...7_200, unit: " s"), .section("on-call", \.onCall),
             .value("escalate-again-after", \.escalateAgainAfter, in: 0...3_600, unit: " s"), .section("senior", \.senior)]
        }
    }

    /// Who is told when a call escalates, and through which of the station's `channels`.
    public struct OnCall: KeyedSection, Equatable, Sendable {
        public var name = ""
        public var phone: String?
        public var email: String?
        public var channels: [String] = []

        public init() {}

        public static var keys: [ConfigKey<Self>] {
            [.value("name", \.name, required: true), .optional("phone", \.phone, nullWhenUnset: false),
             .optional("email", \.email, nullWhenUnset: false), .value("channels", \.channels, required: true)]
        }
    }

    public var broker = Broker()
    public var escalation = Escalation()
    /// Key `channels`: the station's own notifiers, as a bridge's `channels:` (twilio-sms,
    /// twilio-call, webhook, ntfy, …), for the on-call contact.
    public var channels: [String: any ChannelOptions] = [:]
    public var listen = "127.0.0.1:8470"
    public var tlsCertificate: String?
    public var tlsKey: String?
    public var allowPlainHTTP = false
    public var sessionHours = 12.0
    public var acknowledgeSecret: String?
    public var acknowledgeSecrets: [String: String] = [:]
    /// Key `site-key`: the site's key, held by the station (and Home Assistant) only; each
    /// bridge's `acknowledge-secret` is derived from it for its device name
    /// (``MQTTAcknowledgementGate/bridgeKey(siteKey:device:)``), so a bridge's file proves
    /// acknowledgements for that bridge alone (issue 40).
    public var siteKey: String?
    public var staff: [Staff] = []
    public var residents: [String: Resident] = [:]
    public var shifts: [Shift] = []
    /// Key `display-key`: the secret a wall or kiosk display opens its session with
    /// (`/display?key=…`); nil: no display mode.
    public var displayKey: String?
    /// The directory systemd creates for the station's unit (`StateDirectory=fallguard-station`).
    public static let defaultStateDirectory = "/var/lib/fallguard-station"
    /// Key `state-directory`: where the past incidents are kept (`station.sqlite`).
    public var stateDirectory = Self.defaultStateDirectory
    /// Key `history-days`, default 7: how many days of past incidents the station keeps and shows.
    public var historyDays = 7

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.section("broker", \.broker), .value("listen", \.listen),
         .optional("tls-certificate", \.tlsCertificate, nullWhenUnset: false), .optional("tls-key", \.tlsKey, nullWhenUnset: false),
         .value("allow-plain-http", \.allowPlainHTTP), .value("session-hours", \.sessionHours, in: 0.1...720, unit: " h"),
         .optional("acknowledge-secret", \.acknowledgeSecret, secret: true, nullWhenUnset: false),
         .value("acknowledge-secrets", \.acknowledgeSecrets, secret: true),
         .optional("site-key", \.siteKey, secret: true, nullWhenUnset: false),
         .sections("staff", \.staff), .sections("residents", \.residents), .sections("shifts", \.shifts),
         .optional("display-key", \.displayKey, secret: true, nullWhenUnset: false),
         .section("escalation", \.escalation),
         .custom("channels", \.channels, read: { c, k in try c.sections([String: ChannelEntry].self, forKey: k)?.mapValues(\.options) },
                 write: { v, c, k in try c.encode(sections: v.mapValues(ChannelEntry.init), forKey: k) }),
         .value("state-directory", \.stateDirectory), .value("history-days", \.historyDays, in: 1...366, unit: " days")]
    }

    public static func == (a: StationSection, b: StationSection) -> Bool {
        var (x, y) = (a, b)
        (x.channels, y.channels) = ([:], [:])
        return a.channels.isSame(as: b.channels) && x.withoutChannelsEqual(y)
    }

    private func withoutChannelsEqual(_ o: StationSection) -> Bool {
        broker == o.broker && escalation == o.escalation && listen == o.listen && tlsCertificate == o.tlsCertificate
            && tlsKey == o.tlsKey && allowPlainHTTP == o.allowPlainHTTP && sessionHours == o.sessionHours
            && acknowledgeSecret == o.acknowledgeSecret && acknowledgeSecrets == o.acknowledgeSecrets && siteKey == o.siteKey && staff == o.staff
            && residents == o.residents && displayKey == o.displayKey && stateDirectory == o.stateDirectory && historyDays == o.historyDays
            && shifts == o.shifts
    }

    /// The secret that proves an acknowledgement to `device`: its own in `acknowledge-secrets`,
    /// else its key derived from `site-key`, else the one `acknowledge-secret`.
    public func secret(for device: String) -> String? {
        acknowledgeSecrets[device] ?? siteKey.map { MQTTAcknowledgementGate.bridgeKey(siteKey: $0, device: device) } ?? acknowledgeSecret
    }

    /// `listen` split into host and port (as `metrics.listen`).
    public var address: (host: String, port: Int)? {
        var m = MetricsSection()
        m.listen = listen
        return m.address
    }

    /// Whether the page is served on loopback only (then the Host header must name loopback).
    public var onLoopback: Bool { address.map { ConfigCheck.isLoopback($0.host) } ?? true }

    public var tls: (certificate: String, key: String)? {
        guard let c = tlsCertificate, let k = tlsKey else { return nil }
        return (c, k)
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        func problem(_ key: [String], _ message: String, _ severity: ConfigProblem.Severity = .error) {
            out.append(ConfigProblem(path + key, message, severity: severity))
        }
        func at(_ key: PartialKeyPath<Self>) -> [String] { Self.at([], key) }
        func staffAt(_ i: Int, _ key: PartialKeyPath<Staff>) -> [String] { Staff.at(at(\.staff) + [String(i)], key) }
        if broker.host.allSatisfy(\.isWhitespace) { problem(Self.at([], \.broker, \.host), "the site broker's host name or address is required") }
        if (broker.username == nil) != (broker.password == nil) {
            problem(Self.at([], \.broker, broker.username == nil ? \.username : \.password), "username and password go together")
        }
        if broker.password != nil, !broker.tls {
            out += ConfigCheck.plaintext("the broker password", to: broker.host, allowed: false, at: Self.at(path, \.broker, \.tls))
        }
        // A broker beyond this machine without TLS or a login: anyone on the way, or any client
        // of it, reads the site's alarms and may publish what the station shows (the bridges'
        // own check warns likewise).
        if !ConfigCheck.isLoopback(broker.host), !broker.tls || broker.username == nil {
            let missing = [broker.tls ? nil : "TLS (tls: true)", broker.username == nil ? "a login (username, password)" : nil]
                .compactMap { $0 }.joined(separator: " or ")
            problem(Self.at([], \.broker, broker.tls ? \Broker.username as PartialKeyPath<Broker> : \.tls),
                    "the site broker \(broker.host) is not on this machine and has no \(missing): anyone who can reach it reads the residents' alarms and can publish what the staff see", .warning)
        }
        if let why = MQTTTopics.prefixProblem(broker.topicPrefix) { problem(Self.at([], \.broker, \.topicPrefix), why) }
        if !stateDirectory.hasPrefix("/") {
            problem(at(\.stateDirectory), "must be an absolute path, found '\(stateDirectory)'")
        } else if stateDirectory != Self.defaultStateDirectory {
            problem(at(\.stateDirectory), "the systemd unit lets the station write only \(Self.defaultStateDirectory); add \(stateDirectory) to ReadWritePaths= in a drop-in", .warning)
        }
        guard let address else {
            problem(at(\.listen), "expected HOST:PORT with a port 1-65535 (e.g. 127.0.0.1:8470), found '\(listen)'")
            return out
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            problem(at(tlsCertificate == nil ? \.tlsCertificate : \.tlsKey), "tls-certificate and tls-key go together")
        }
        for (key, file) in [(\Self.tlsCertificate, tlsCertificate), (\.tlsKey, tlsKey)] {
            if let file, !FileManager.default.isReadableFile(atPath: file) { problem(at(key), "cannot read \(file)") }
        }
        if !ConfigCheck.isLoopback(address.host), tls == nil {
            let what = "the staff's passwords and the residents' alarms would cross the network to \(address.host) in clear text"
            if allowPlainHTTP { problem(at(\.allowPlainHTTP), "\(what) (allowed by allow-plain-http)", .warning) }
            else { problem(at(\.tlsCertificate), "\(what): set tls-certificate and tls-key, or allow-plain-http: true to accept it") }
        }
        if staff.isEmpty { problem(at(\.staff), "no member of staff: nobody could sign in (give each their own user, name and password)") }
        var users: Set<String> = []
        for (i, member) in staff.enumerated() {
            if member.user.isEmpty || member.user.count > 64 || member.user.contains(where: { $0.isWhitespace || $0.isNewline }) {
                problem(staffAt(i, \.user), "one word of at most 64 characters, found '\(member.user)'")
            }
            if !users.insert(member.user.lowercased()).inserted { problem(staffAt(i, \.user), "'\(member.user)' is listed twice") }
            if member.name.trimmingCharacters(in: .whitespaces).isEmpty || member.name.count > 100 {
                problem(staffAt(i, \.name), "the name the bridges show as who answered: 1 to 100 characters")
            }
            if member.password.count < 8 { problem(staffAt(i, \.password), "at least 8 characters, found \(member.password.count)") }
        }
        var pins: [String: Int] = [:]
        for (i, member) in staff.enumerated() {
            guard let pin = member.pin else { continue }
            if !(4...8).contains(pin.count) || !pin.allSatisfy({ $0.isASCII && $0.isNumber }) {
                let digits = pin.allSatisfy { $0.isASCII && $0.isNumber }
                problem(staffAt(i, \.pin), "4 to 8 digits, found \(pin.count) characters\(digits ? "" : ", not all digits")")
            } else if let other = pins[pin] {
                problem(staffAt(i, \.pin), "the same PIN as staff \(other) ('\(staff[other].user)'): a display could not tell who acknowledged")
            }
            pins[pin] = pins[pin] ?? i
        }
        if let key = displayKey, key.count < 16 {
            problem(at(\.displayKey), "must be at least 16 characters (e.g. openssl rand -hex 16): it opens a display that sees every alarm")
        }
        let floors = Set(self.floors), staffUsers = Set(staff.map(\.user))
        for (i, shift) in shifts.enumerated() {
            if shift.window == nil { problem(at(\.shifts) + [String(i)], "from and to must be two different local times HH:MM (\"\(shift.from)\"-\"\(shift.to)\")") }
            for (user, theirs) in shift.floors.sorted(by: { $0.key < $1.key }) {
                if !staffUsers.contains(user) { problem(Shift.at(at(\.shifts) + [String(i)], \.floors) + [user], "no member of staff has the user name '\(user)'") }
                for floor in theirs where !floors.contains(floor) {
                    problem(Shift.at(at(\.shifts) + [String(i)], \.floors) + [user], "no resident is on floor '\(floor)' (floors: \(floors.isEmpty ? "none" : floors.sorted().joined(separator: ", ")))", .warning)
                }
            }
        }
        if displayKey != nil, !staff.contains(where: { $0.pin != nil }) {
            problem(at(\.displayKey), "no member of staff has a pin: a display could show alarms but nobody could acknowledge there", .warning)
        }
        for name in channels.keys.sorted() {
            out += ChannelEntry(channels[name]!).problems(at: Self.at(path, \.channels) + [name])
        }
        for (key, contact) in [(\Escalation.onCall, escalation.onCall), (\.senior, escalation.senior)] {
            guard let contact else { continue }
            for (i, name) in contact.channels.enumerated() where channels[name] == nil {
                let known = channels.keys.sorted().joined(separator: ", ")
                problem(OnCall.at(Self.at([], \.escalation, key), \.channels) + [String(i)], "unknown channel '\(name)' (station channels: \(known.isEmpty ? "none" : known))")
            }
            for name in contact.channels {
                guard let addressing = channels[name]?.addressing else { continue }
                if addressing == .phone, contact.phone == nil { problem(OnCall.at(Self.at([], \.escalation, key), \.phone), "channel '\(name)' sends to a phone number: set phone") }
                if addressing == .email, contact.email == nil { problem(OnCall.at(Self.at([], \.escalation, key), \.email), "channel '\(name)' sends to an address: set email") }
            }
        }
        if escalation.escalateAgainAfter > 0, escalation.escalateAgainAfter < 30 {
            problem(Self.at([], \.escalation, \.escalateAgainAfter), "\(Int(escalation.escalateAgainAfter)) s is too soon after the first escalation (0: no second tier, else 30-3600 s)")
        }
        if escalation.senior != nil, escalation.escalateAgainAfter == 0 {
            problem(Self.at([], \.escalation, \.senior), "is never told: set escalate-again-after (s)", .warning)
        }
        if acknowledgeSecret == nil && acknowledgeSecrets.isEmpty && siteKey == nil {
            problem(at(\.siteKey), "without site-key (or the bridges' acknowledge-secret) the page cannot acknowledge (the bridges take only proven acknowledgements)")
        }
        if let key = siteKey, key.count < 32 {
            problem(at(\.siteKey), "must be at least 32 characters (e.g. openssl rand -hex 32): every bridge's key is derived from it")
        }
        if siteKey != nil, acknowledgeSecret != nil {
            problem(at(\.acknowledgeSecret), "not used with site-key: the station signs with each bridge's key derived from site-key, so a bridge still on this shared secret refuses the station's acknowledgements until it is given its own (fallguard station --bridge-key, docs/care-home.md)", .warning)
        }
        if let secret = acknowledgeSecret, secret.count < 16 {
            problem(at(\.acknowledgeSecret), "must be at least 16 characters (e.g. openssl rand -hex 16)")
        }
        for (device, secret) in acknowledgeSecrets.sorted(by: { $0.key < $1.key }) where secret.count < 16 {
            problem(at(\.acknowledgeSecrets) + [device], "must be at least 16 characters (e.g. openssl rand -hex 16)")
        }
        return out
    }
}

/// A station's file: `station:` alone (and the credentials file laid over it).
public struct StationConfiguration: Sendable {
    public var path: String
    public var station = StationSection()
    public var redactor = SecretRedactor()

    /// Whether the file at `path` is a station's (its top level has `station:`), for
    /// `fallguard check-config`, which checks either kind.
    public static func describes(path: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        ConfigDocument.load(path: path, environment: environment).topLevelKeys.contains("station")
    }

    /// Reads `path` and collects every problem (file:line: key: message).
    public static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (StationConfiguration, [ConfigDiagnostic]) {
        var doc = ConfigDocument.load(path: path, environment: environment)
        var c = StationConfiguration(path: path)
        if let s = doc.section(StationSection.self, at: "station") { c.station = s }
        let diagnostics = doc.finish()
        c.redactor = doc.redactor
        // In typed steps: Debian's Swift 6.2.3 (the arm64 cross-build) gives up type-checking
        // the one `+` chain of five arrays this was.
        let single: [String?] = [c.station.acknowledgeSecret, c.station.broker.password, c.station.broker.residentsPassword,
                                 c.station.displayKey, c.station.siteKey]
        var secrets: [String] = c.station.staff.map(\.password)
        secrets += single.compactMap { $0 }
        secrets += c.station.residents.keys.compactMap(c.station.secret(for:))
        secrets += c.station.channels.values.flatMap(\.secrets)
        secrets += Array(c.station.acknowledgeSecrets.values)
        c.redactor.add(contentsOf: secrets)
        return (c, diagnostics)
    }
}
