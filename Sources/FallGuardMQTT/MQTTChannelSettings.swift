import FallGuardCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `channels.<name>` section of an MQTT channel (`type: mqtt`). Every key but `host` has a
/// default; `password` goes with `username`; `tls: true` switches to TLS (port 8883 by
/// default) with the system's CAs unless `ca-file` names one.
public struct MQTTChannelSettings: ConfigSection, Equatable {
    /// The broker (key `host`, default `localhost`).
    public var host: String
    /// Key `port`; nil means 1883, or 8883 with TLS.
    public var port: Int?
    public var username: String?
    public var password: String?
    /// This bridge's id in the topics and in Home Assistant (key `device`; nil means the
    /// hostname). Must be unique per broker: many bridges share one.
    public var device: String?
    /// MQTT client id (key `client-id`; nil means `fallguard-<device>`).
    public var clientID: String?
    /// First topic level (key `topic-prefix`, default `fallguard`): topics are
    /// `<topic-prefix>/<device>/…`.
    public var topicPrefix: String
    /// Publish Home Assistant discovery configs (key `discovery`, default true).
    public var discovery: Bool
    /// Key `discovery-prefix`, default `homeassistant`.
    public var discoveryPrefix: String
    /// Seconds between keep-alive pings (key `keepalive`, default 30); the broker sends the last
    /// will after 1.5 times this without a word (at once when the connection breaks).
    public var keepalive: Int
    /// How long one alert may wait for the broker's PUBACK, connecting included, before it
    /// fails as transient (key `publish-timeout`, seconds, default 10).
    public var publishTimeout: Double
    /// First reconnect delay in seconds, doubled up to `reconnect-delay-max` (defaults 1 and 60).
    public var reconnectDelay: Int
    public var reconnectDelayMax: Int
    /// Key `tls`, default false.
    public var tls: Bool
    /// PEM CA certificate to trust (key `ca-file`); nil means the system's (`/etc/ssl/certs`).
    public var caFile: String?
    /// PEM client certificate and key for brokers that require one (keys `cert-file`, `key-file`).
    public var certFile: String?
    public var keyFile: String?

    public init(host: String = "localhost", port: Int? = nil, username: String? = nil,
                password: String? = nil, device: String? = nil, clientID: String? = nil,
                topicPrefix: String = "fallguard", discovery: Bool = true,
                discoveryPrefix: String = "homeassistant", keepalive: Int = 30,
                publishTimeout: Double = 10, reconnectDelay: Int = 1, reconnectDelayMax: Int = 60,
                tls: Bool = false, caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.device = device
        self.clientID = clientID
        self.topicPrefix = topicPrefix
        self.discovery = discovery
        self.discoveryPrefix = discoveryPrefix
        self.keepalive = keepalive
        self.publishTimeout = publishTimeout
        self.reconnectDelay = reconnectDelay
        self.reconnectDelayMax = reconnectDelayMax
        self.tls = tls
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }

    enum CodingKeys: String, CodingKey {
        case host, port, username, password, device, discovery, keepalive, tls
        case clientID = "client-id", topicPrefix = "topic-prefix", discoveryPrefix = "discovery-prefix"
        case publishTimeout = "publish-timeout", reconnectDelay = "reconnect-delay"
        case reconnectDelayMax = "reconnect-delay-max"
        case caFile = "ca-file", certFile = "cert-file", keyFile = "key-file"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = MQTTChannelSettings()
        self.init(
            host: try c.decodeIfPresent(String.self, forKey: .host) ?? d.host,
            port: try c.decodeIfPresent(Int.self, forKey: .port),
            username: try c.decodeIfPresent(String.self, forKey: .username),
            password: try c.decodeIfPresent(String.self, forKey: .password),
            device: try c.decodeIfPresent(String.self, forKey: .device),
            clientID: try c.decodeIfPresent(String.self, forKey: .clientID),
            topicPrefix: try c.decodeIfPresent(String.self, forKey: .topicPrefix) ?? d.topicPrefix,
            discovery: try c.decodeIfPresent(Bool.self, forKey: .discovery) ?? d.discovery,
            discoveryPrefix: try c.decodeIfPresent(String.self, forKey: .discoveryPrefix) ?? d.discoveryPrefix,
            keepalive: try c.decodeIfPresent(Int.self, forKey: .keepalive) ?? d.keepalive,
            publishTimeout: try c.decodeIfPresent(Double.self, forKey: .publishTimeout) ?? d.publishTimeout,
            reconnectDelay: try c.decodeIfPresent(Int.self, forKey: .reconnectDelay) ?? d.reconnectDelay,
            reconnectDelayMax: try c.decodeIfPresent(Int.self, forKey: .reconnectDelayMax) ?? d.reconnectDelayMax,
            tls: try c.decodeIfPresent(Bool.self, forKey: .tls) ?? d.tls,
            caFile: try c.decodeIfPresent(String.self, forKey: .caFile),
            certFile: try c.decodeIfPresent(String.self, forKey: .certFile),
            keyFile: try c.decodeIfPresent(String.self, forKey: .keyFile))
    }

    /// Every key, nil ones as `null`: the loader reports keys that do not come back as unknown.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(host, forKey: .host)
        try c.encode(topicPrefix, forKey: .topicPrefix)
        try c.encode(discovery, forKey: .discovery)
        try c.encode(discoveryPrefix, forKey: .discoveryPrefix)
        try c.encode(keepalive, forKey: .keepalive)
        try c.encode(publishTimeout, forKey: .publishTimeout)
        try c.encode(reconnectDelay, forKey: .reconnectDelay)
        try c.encode(reconnectDelayMax, forKey: .reconnectDelayMax)
        try c.encode(tls, forKey: .tls)
        for (key, value) in [(CodingKeys.username, username), (.password, password), (.device, device),
                             (.clientID, clientID), (.caFile, caFile), (.certFile, certFile), (.keyFile, keyFile)] {
            if let value { try c.encode(value, forKey: key) } else { try c.encodeNil(forKey: key) }
        }
        if let port { try c.encode(port, forKey: .port) } else { try c.encodeNil(forKey: .port) }
    }

    /// The port in use: `port`, else 8883 with TLS, else 1883.
    public var effectivePort: Int { port ?? (tls ? 8883 : 1883) }

    /// The device id in use: `device`, else this machine's hostname made topic-safe.
    public var effectiveDevice: String { device ?? MQTTTopics.topicSafe(currentHostname()) }

    /// The client id in use: `client-id`, else `fallguard-<device>`.
    public var effectiveClientID: String { clientID ?? "fallguard-\(effectiveDevice)" }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        func problem(_ key: String, _ message: String, _ severity: ConfigProblem.Severity = .error) {
            found.append(ConfigProblem(path + [key], message, severity: severity))
        }
        if host.trimmingWhitespace.isEmpty { problem("host", "the broker's host name or address is required") }
        if let port, !(1...65_535).contains(port) { problem("port", "\(port) is not a TCP port (1 to 65535)") }
        if username != nil, password == nil { problem("password", "a password is required with username") }
        if password != nil, username == nil { problem("username", "a username is required with password") }
        if let device, let why = MQTTTopics.levelProblem(device) { problem("device", why) }
        if let clientID, clientID.isEmpty || clientID.utf8.count > 65_535 { problem("client-id", "must not be empty") }
        for (key, value) in [("topic-prefix", topicPrefix), ("discovery-prefix", discoveryPrefix)] {
            if let why = MQTTTopics.prefixProblem(value) { problem(key, why) }
        }
        if !(5...3_600).contains(keepalive) { problem("keepalive", "\(keepalive) s is outside 5...3600 s") }
        if !(publishTimeout.isFinite && (0.1...300).contains(publishTimeout)) {
            problem("publish-timeout", "\(publishTimeout) s is outside 0.1...300 s")
        }
        if !(1...3_600).contains(reconnectDelay) { problem("reconnect-delay", "\(reconnectDelay) s is outside 1...3600 s") }
        if !(reconnectDelay...max(reconnectDelay, 3_600)).contains(reconnectDelayMax) {
            problem("reconnect-delay-max", "\(reconnectDelayMax) s must be between reconnect-delay (\(reconnectDelay) s) and 3600 s")
        }
        if certFile != nil, keyFile == nil { problem("key-file", "a key file is required with cert-file") }
        if keyFile != nil, certFile == nil { problem("cert-file", "a certificate file is required with key-file") }
        for (key, file) in [("ca-file", caFile), ("cert-file", certFile), ("key-file", keyFile)] {
            guard let file else { continue }
            if !tls { problem(key, "ignored unless tls is true", .warning) }
            if access(file, R_OK) != 0 { problem(key, "cannot read '\(file)': \(String(cString: strerror(errno)))") }
        }
        return found
    }
}

/// This machine's name, as `hostname` prints it.
func currentHostname() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "fallguard" }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? "fallguard" : name
}

extension String {
    var trimmingWhitespace: Substring {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return s
    }
}
