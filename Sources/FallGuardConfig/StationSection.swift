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
///   acknowledge-secret: ${FALLGUARD_ACK_SECRET}   # the bridges' acknowledge-secret
///   acknowledge-secrets: {room-012: ...}     # a bridge with its own
///   staff:
///     - {user: anna, name: Anna Smith, password: ...}   # in the credentials file
///   residents:
///     room-012: {wearer: Margaret, location: "Room 12, first floor"}
///   session-hours: 12
/// ```
public struct StationSection: ConfigSection, Codable, Equatable {
    public struct Broker: Codable, Equatable, Sendable {
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
        public var keepalive = 30

        public init() {}

        enum CodingKeys: String, CodingKey {
            case host, port, tls, username, password, keepalive
            case caFile = "ca-file", certFile = "cert-file", keyFile = "key-file"
            case topicPrefix = "topic-prefix", clientID = "client-id"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            host = try c.value(.host, default: host)
            port = try c.decodeIfPresent(Int.self, forKey: .port)
            tls = try c.value(.tls, default: tls)
            caFile = try c.decodeIfPresent(String.self, forKey: .caFile)
            certFile = try c.decodeIfPresent(String.self, forKey: .certFile)
            keyFile = try c.decodeIfPresent(String.self, forKey: .keyFile)
            username = try c.decodeIfPresent(String.self, forKey: .username)
            password = try c.decodeIfPresent(String.self, forKey: .password)
            topicPrefix = try c.value(.topicPrefix, default: topicPrefix)
            clientID = try c.decodeIfPresent(String.self, forKey: .clientID)
            keepalive = try c.value(.keepalive, default: keepalive)
        }

        /// As the MQTT module's settings (the bridge's keys the station shares).
        public var settings: MQTTChannelSettings {
            MQTTChannelSettings(host: host, port: port, username: username, password: password, clientID: clientID,
                                topicPrefix: topicPrefix, discovery: false, keepalive: keepalive,
                                tls: tls, caFile: caFile, certFile: certFile, keyFile: keyFile)
        }
    }

    public struct Staff: Codable, Equatable, Sendable {
        public var user: String
        public var name: String
        public var password: String
    }

    public struct Resident: Codable, Equatable, Sendable {
        public var wearer: String?
        public var location: String?
    }

    public var broker = Broker()
    public var listen = "127.0.0.1:8470"
    public var tlsCertificate: String?
    public var tlsKey: String?
    public var allowPlainHTTP = false
    public var sessionHours = 12.0
    public var acknowledgeSecret: String?
    public var acknowledgeSecrets: [String: String] = [:]
    public var staff: [Staff] = []
    public var residents: [String: Resident] = [:]

    public init() {}

    enum CodingKeys: String, CodingKey {
        case broker, listen, staff, residents
        case tlsCertificate = "tls-certificate", tlsKey = "tls-key", allowPlainHTTP = "allow-plain-http"
        case sessionHours = "session-hours", acknowledgeSecret = "acknowledge-secret", acknowledgeSecrets = "acknowledge-secrets"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        broker = try c.value(.broker, default: broker)
        listen = try c.value(.listen, default: listen)
        tlsCertificate = try c.decodeIfPresent(String.self, forKey: .tlsCertificate)
        tlsKey = try c.decodeIfPresent(String.self, forKey: .tlsKey)
        allowPlainHTTP = try c.value(.allowPlainHTTP, default: allowPlainHTTP)
        sessionHours = try c.value(.sessionHours, default: sessionHours)
        acknowledgeSecret = try c.decodeIfPresent(String.self, forKey: .acknowledgeSecret)
        acknowledgeSecrets = try c.value(.acknowledgeSecrets, default: acknowledgeSecrets)
        staff = try c.value(.staff, default: staff)
        residents = try c.value(.residents, default: residents)
    }

    /// The secret that proves an acknowledgement to `device`.
    public func secret(for device: String) -> String? { acknowledgeSecrets[device] ?? acknowledgeSecret }

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

    public func problems(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        func problem(_ key: [String], _ message: String, _ severity: ConfigProblem.Severity = .error) {
            out.append(ConfigProblem(path + key, message, severity: severity))
        }
        if broker.host.allSatisfy(\.isWhitespace) { problem(["broker", "host"], "the site broker's host name or address is required") }
        if let port = broker.port, !(1...65_535).contains(port) { problem(["broker", "port"], "\(port) is not a TCP port (1 to 65535)") }
        if (broker.username == nil) != (broker.password == nil) {
            problem(["broker", broker.username == nil ? "username" : "password"], "username and password go together")
        }
        if broker.password != nil, !broker.tls {
            out += ConfigCheck.plaintext("the broker password", to: broker.host, allowed: false, at: path + ["broker", "tls"])
        }
        if let why = MQTTTopics.prefixProblem(broker.topicPrefix) { problem(["broker", "topic-prefix"], why) }
        if !(5...3_600).contains(broker.keepalive) { problem(["broker", "keepalive"], "\(broker.keepalive) s is outside 5...3600 s") }
        guard let address else {
            problem(["listen"], "expected HOST:PORT with a port 1-65535 (e.g. 127.0.0.1:8470), found '\(listen)'")
            return out
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            problem([tlsCertificate == nil ? "tls-certificate" : "tls-key"], "tls-certificate and tls-key go together")
        }
        for (key, file) in [("tls-certificate", tlsCertificate), ("tls-key", tlsKey)] {
            if let file, !FileManager.default.isReadableFile(atPath: file) { problem([key], "cannot read \(file)") }
        }
        if !ConfigCheck.isLoopback(address.host), tls == nil {
            let what = "the staff's passwords and the residents' alarms would cross the network to \(address.host) in clear text"
            if allowPlainHTTP { problem(["allow-plain-http"], "\(what) (allowed by allow-plain-http)", .warning) }
            else { problem(["tls-certificate"], "\(what): set tls-certificate and tls-key, or allow-plain-http: true to accept it") }
        }
        if !(0.1...720).contains(sessionHours) { problem(["session-hours"], "must be 0.1 to 720 hours, found \(sessionHours)") }
        if staff.isEmpty { problem(["staff"], "no member of staff: nobody could sign in (give each their own user, name and password)") }
        var users: Set<String> = []
        for (i, member) in staff.enumerated() {
            if member.user.isEmpty || member.user.count > 64 || member.user.contains(where: { $0.isWhitespace || $0.isNewline }) {
                problem(["staff", String(i), "user"], "one word of at most 64 characters, found '\(member.user)'")
            }
            if !users.insert(member.user.lowercased()).inserted { problem(["staff", String(i), "user"], "'\(member.user)' is listed twice") }
            if member.name.trimmingCharacters(in: .whitespaces).isEmpty || member.name.count > 100 {
                problem(["staff", String(i), "name"], "the name the bridges show as who answered: 1 to 100 characters")
            }
            if member.password.count < 8 { problem(["staff", String(i), "password"], "at least 8 characters, found \(member.password.count)") }
        }
        if acknowledgeSecret == nil && acknowledgeSecrets.isEmpty {
            problem(["acknowledge-secret"], "without the bridges' acknowledge-secret the page cannot acknowledge (the bridges take only proven acknowledgements)")
        }
        if let secret = acknowledgeSecret, secret.count < 16 {
            problem(["acknowledge-secret"], "must be at least 16 characters (e.g. openssl rand -hex 16)")
        }
        for (device, secret) in acknowledgeSecrets.sorted(by: { $0.key < $1.key }) where secret.count < 16 {
            problem(["acknowledge-secrets", device], "must be at least 16 characters (e.g. openssl rand -hex 16)")
        }
        return out
    }
}

/// A station's file: `station:` alone (and the credentials file laid over it).
public struct StationConfiguration: Sendable {
    public var path: String
    public var station = StationSection()
    public var redactor = SecretRedactor()

    /// Reads `path` and collects every problem (file:line: key: message).
    public static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (StationConfiguration, [ConfigDiagnostic]) {
        var doc = ConfigDocument.load(path: path, environment: environment)
        var c = StationConfiguration(path: path)
        if let s = doc.section(StationSection.self, at: "station") { c.station = s }
        let diagnostics = doc.finish()
        c.redactor = doc.redactor
        c.redactor.add(contentsOf: c.station.staff.map(\.password) + [c.station.acknowledgeSecret, c.station.broker.password].compactMap { $0 }
            + Array(c.station.acknowledgeSecrets.values))
        return (c, diagnostics)
    }
}
