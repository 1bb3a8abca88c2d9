import FallGuardCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the SMTP connection is protected.
public enum SMTPSecurity: String, Sendable, Codable, Equatable, CaseIterable {
    /// Plain connection upgraded with STARTTLS, which must succeed (port 587 by default).
    case starttls
    /// TLS from the first byte, `smtps://` (port 465 by default).
    case tls
    /// No encryption (port 25): only for a relay on the same machine.
    case none
}

/// The `channels.<name>` section of an e-mail channel (`type: email`). `host` and `from` are
/// required; `password` goes with `username`. Recipients come from the contacts' `email`.
public struct EmailChannelSettings: ConfigSection, Equatable {
    /// The SMTP server (key `host`).
    public var host: String
    /// Key `port`; nil means 587 (`starttls`), 465 (`tls`) or 25 (`none`).
    public var port: Int?
    /// Key `security`, default `starttls`.
    public var security: SMTPSecurity
    public var username: String?
    public var password: String?
    /// The sender's address (key `from`), e.g. `fallguard@example.org`.
    public var from: String
    /// The sender's display name (key `from-name`, default `FallGuard`).
    public var fromName: String
    /// A PEM CA certificate to trust instead of the system's (key `ca-file`), for a server with
    /// a private CA.
    public var caFile: String?
    /// Seconds to connect, TLS included (key `connect-timeout`, default 10).
    public var connectTimeout: Double
    /// Seconds for the whole exchange (key `timeout`, default 30).
    public var timeout: Double

    public init(host: String = "", port: Int? = nil, security: SMTPSecurity = .starttls,
                username: String? = nil, password: String? = nil, from: String = "",
                fromName: String = "FallGuard", caFile: String? = nil,
                connectTimeout: Double = 10, timeout: Double = 30) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.from = from
        self.fromName = fromName
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.timeout = timeout
    }

    enum CodingKeys: String, CodingKey {
        case host, port, security, username, password, from, timeout
        case fromName = "from-name", caFile = "ca-file", connectTimeout = "connect-timeout"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = EmailChannelSettings()
        self.init(
            host: try c.decodeIfPresent(String.self, forKey: .host) ?? d.host,
            port: try c.decodeIfPresent(Int.self, forKey: .port),
            security: try c.decodeIfPresent(SMTPSecurity.self, forKey: .security) ?? d.security,
            username: try c.decodeIfPresent(String.self, forKey: .username),
            password: try c.decodeIfPresent(String.self, forKey: .password),
            from: try c.decodeIfPresent(String.self, forKey: .from) ?? d.from,
            fromName: try c.decodeIfPresent(String.self, forKey: .fromName) ?? d.fromName,
            caFile: try c.decodeIfPresent(String.self, forKey: .caFile),
            connectTimeout: try c.decodeIfPresent(Double.self, forKey: .connectTimeout) ?? d.connectTimeout,
            timeout: try c.decodeIfPresent(Double.self, forKey: .timeout) ?? d.timeout)
    }

    /// Every key, nil ones as `null`: the loader reports keys that do not come back as unknown.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(host, forKey: .host)
        try c.encode(security, forKey: .security)
        try c.encode(from, forKey: .from)
        try c.encode(fromName, forKey: .fromName)
        try c.encode(connectTimeout, forKey: .connectTimeout)
        try c.encode(timeout, forKey: .timeout)
        for (key, value) in [(CodingKeys.username, username), (.password, password), (.caFile, caFile)] {
            if let value { try c.encode(value, forKey: key) } else { try c.encodeNil(forKey: key) }
        }
        if let port { try c.encode(port, forKey: .port) } else { try c.encodeNil(forKey: .port) }
    }

    /// The port in use.
    public var effectivePort: Int {
        if let port { return port }
        return switch security {
        case .starttls: 587
        case .tls: 465
        case .none: 25
        }
    }

    /// `smtps://host:port` for implicit TLS, `smtp://host:port` otherwise.
    public var url: String {
        let h = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host  // IPv6 literal
        return "\(security == .tls ? "smtps" : "smtp")://\(h):\(effectivePort)"
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        func problem(_ key: String, _ message: String, _ severity: ConfigProblem.Severity = .error) {
            found.append(ConfigProblem(path + [key], message, severity: severity))
        }
        if host.isEmpty || host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            problem("host", host.isEmpty ? "the SMTP server's host name is required" : "'\(host)' is not a host name")
        }
        if let port, !(1...65_535).contains(port) { problem("port", "\(port) is not a TCP port (1 to 65535)") }
        if username != nil, password == nil { problem("password", "a password is required with username") }
        if password != nil, username == nil { problem("username", "a username is required with password") }
        if from.isEmpty {
            problem("from", "the sender's address is required")
        } else if !EmailAddress.isValid(from) {
            problem("from", "'\(from)' is not an e-mail address")
        }
        if fromName.contains(where: { $0 == "\r" || $0 == "\n" }) { problem("from-name", "must be one line") }
        if security == .none, !["localhost", "127.0.0.1", "::1"].contains(host) {
            problem("security", "'none' sends the alert and any password in clear text to \(host)", .warning)
        }
        if security == .none, username != nil { problem("security", "'none' with a username would send the password in clear text") }
        if let caFile, access(caFile, R_OK) != 0 { problem("ca-file", "cannot read '\(caFile)': \(String(cString: strerror(errno)))") }
        if !(connectTimeout.isFinite && (1...300).contains(connectTimeout)) {
            problem("connect-timeout", "\(connectTimeout) s is outside 1...300 s")
        }
        if !(timeout.isFinite && (1...600).contains(timeout)) { problem("timeout", "\(timeout) s is outside 1...600 s") }
        return found
    }
}

/// Plain addresses (`local@domain`): what FallGuard accepts for senders and contacts.
public enum EmailAddress {
    /// One `@` between a non-empty local part and a domain with a dot, no spaces, angle
    /// brackets, quotes or control characters (they would break the SMTP envelope or headers).
    public static func isValid(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, address.utf8.count <= 254 else { return false }
        let domain = parts[1]
        guard domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix(".") else { return false }
        return !address.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || "<>()[]\\,;:\"".unicodeScalars.contains($0) }
    }
}
