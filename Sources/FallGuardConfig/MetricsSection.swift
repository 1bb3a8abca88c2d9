import FallGuardConfigKeys
import FallGuardCore

/// `metrics:` — the daemon's HTTP server: the Prometheus `/metrics` endpoint, and the page
/// (`web:`) at the same address.
public struct MetricsSection: KeyedSection, Codable, Equatable {
    /// Key `enabled`, default true.
    public var enabled = true
    /// `HOST:PORT` to listen on (key `listen`, default `127.0.0.1:9466`; `[::1]:9466` for IPv6).
    public var listen = "127.0.0.1:9466"

    public init() {}

    public static var keys: [ConfigKey<Self>] { [.value("enabled", \.enabled), .value("listen", \.listen)] }

    /// `listen` split into host (brackets removed) and port; nil when malformed.
    public var address: (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = String(listen[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil   // IPv6 needs brackets
        }
        return host.isEmpty ? nil : (host, port)
    }

    /// Whether the server listens on loopback only (`localhost`, `::1`, 127.x).
    public var onLoopback: Bool { address.map { ConfigCheck.isLoopback($0.host) } ?? true }

    public func checks(at path: [String]) -> [ConfigProblem] {
        guard address != nil else {
            return [ConfigProblem(Self.at(path, \.listen), "expected HOST:PORT with a port 1-65535 (e.g. 127.0.0.1:9466 or [::1]:9466), found '\(listen)'")]
        }
        return []   // who may reach it: the web section's checks (one server for the page and the metrics)
    }
}
