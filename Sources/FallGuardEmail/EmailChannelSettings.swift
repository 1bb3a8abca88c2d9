import FallGuardCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the SMTP connection is protected.
public enum SMTPSecurity: Sendable, Equatable, CaseIterable {
    /// Plain connection upgraded with STARTTLS, which must succeed (port 587 by default).
    case starttls
    /// TLS from the first byte, `smtps://` (port 465 by default).
    case tls
    /// No encryption (port 25): only for a relay on the same machine.
    case none
}

/// An e-mail channel's SMTP server, account and sender. `password` goes with `username`.
/// Recipients come from the contacts' e-mail addresses.
public struct EmailChannelSettings: Sendable, Equatable {
    /// The SMTP server.
    public var host: String
    /// nil means 587 (`starttls`), 465 (`tls`) or 25 (`none`).
    public var port: Int?
    public var security: SMTPSecurity
    public var username: String?
    public var password: String?
    /// The sender's address, e.g. `fallguard@example.org`.
    public var from: String
    /// The sender's display name.
    public var fromName: String
    /// A PEM CA certificate to trust instead of the system's, for a server with a private CA.
    public var caFile: String?
    /// Seconds to connect, TLS included.
    public var connectTimeout: Double
    /// Seconds for the whole exchange.
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
