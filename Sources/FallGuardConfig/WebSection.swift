import FallGuardConfigKeys
import FallGuardCore
import Foundation

/// `web:` — the page on the bridge (live acceleration, state and countdown, incidents with
/// their plots and labels, the outbox), served at `/` by the daemon's HTTP server at
/// `metrics.listen`. Loopback only unless a password is set.
///
/// ```yaml
/// web:
///   enabled: true
///   password: ...                    # put it in the credentials file
///   tls-certificate: /etc/fallguard/web.crt
///   tls-key: /etc/fallguard/web.key
///   allow-plain-http: false          # a password over plain HTTP beyond this machine
///   allow-anonymous: false    # the page beyond this machine without a password
///   session-hours: 12
/// ```
public struct WebSection: KeyedSection, Codable, Equatable {
    public var enabled = true
    /// The password of the login form (also HTTP Basic for `/metrics` scrapers).
    public var password: String?
    public var tlsCertificate: String?
    public var tlsKey: String?
    public var allowPlainHTTP = false
    public var allowAnonymous = false
    /// How long a login lasts.
    public var sessionHours = 12.0

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.value("enabled", \.enabled), .optional("password", \.password, secret: true, nullWhenUnset: false),
         .optional("tls-certificate", \.tlsCertificate, nullWhenUnset: false), .optional("tls-key", \.tlsKey, nullWhenUnset: false),
         .value("allow-plain-http", \.allowPlainHTTP), .value("allow-anonymous", \.allowAnonymous),
         .value("session-hours", \.sessionHours, in: 0.1...720, unit: " h")]
    }

    /// TLS when both files are named.
    public var tls: (certificate: String, key: String)? {
        guard let c = tlsCertificate, let k = tlsKey else { return nil }
        return (c, k)
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        if let p = password, p.count < 8 {
            out.append(ConfigProblem(Self.at(path, \.password), "at least 8 characters, found \(p.count)"))
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            out.append(ConfigProblem(Self.at(path, tlsCertificate == nil ? \.tlsCertificate : \.tlsKey),
                                     "tls-certificate and tls-key go together"))
        }
        for (key, file) in [(\Self.tlsCertificate, tlsCertificate), (\.tlsKey, tlsKey)] {
            if let file, !FileManager.default.isReadableFile(atPath: file) {
                out.append(ConfigProblem(Self.at(path, key), "cannot read \(file)"))
            }
        }
        if let key = tlsKey, let w = ConfigSecrets.modeWarning(key, key: Self.at(path, \.tlsKey), what: "the TLS key") { out.append(w) }
        return out
    }

    /// Who can reach the page and the metrics at `listen` (`metrics.listen`, checked by its own
    /// section), and whether a password would cross the network in clear.
    public func accessProblems(listenHost host: String, at path: [String]) -> [ConfigProblem] {
        guard !ConfigCheck.isLoopback(host) else { return [] }
        var out: [ConfigProblem] = []
        if password == nil {
            let what = "\(host) serves the page and the metrics (the wearer's falls, the contacts' names) beyond this machine without a password"
            out.append(allowAnonymous
                ? ConfigProblem(Self.at(path, \.allowAnonymous), "\(what) (allowed by allow-anonymous)", severity: .warning)
                : ConfigProblem(Self.at(path, \.password), "\(what): set web.password (in the credentials file), or allow-anonymous: true to accept it"))
        } else if tls == nil {
            let what = "the password would cross the network to \(host) in clear text (plain HTTP)"
            out.append(allowPlainHTTP
                ? ConfigProblem(Self.at(path, \.allowPlainHTTP), "\(what) (allowed by allow-plain-http)", severity: .warning)
                : ConfigProblem(Self.at(path, \.tlsCertificate), "\(what): set tls-certificate and tls-key, or allow-plain-http: true to accept it"))
        }
        return out
    }
}
