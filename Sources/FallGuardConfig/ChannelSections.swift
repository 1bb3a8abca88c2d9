import FallGuardEmail
import FallGuardMQTT
import FallGuardNotify
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `type: mqtt`. Every key but `host` has a default; `password` goes with `username`;
/// `tls: true` switches to TLS (port 8883 by default) with the system's CAs unless `ca-file`
/// names one. A password to a broker on another machine needs TLS, or `allow-plaintext: true`.
extension MQTTChannelSettings: ChannelSection {
    enum CodingKeys: String, CodingKey {
        case host, port, username, password, device, discovery, keepalive, tls
        case allowPlaintext = "allow-plaintext"
        case clientID = "client-id", topicPrefix = "topic-prefix", discoveryPrefix = "discovery-prefix"
        case publishTimeout = "publish-timeout", reconnectDelay = "reconnect-delay"
        case reconnectDelayMax = "reconnect-delay-max"
        case caFile = "ca-file", certFile = "cert-file", keyFile = "key-file"
        case acknowledgeSecret = "acknowledge-secret", acknowledgeMode = "acknowledge-mode"
    }

    public var addressing: ChannelAddressing { .broadcast }

    /// The password. The channel is not wrapped in a redactor (the daemon finds its MQTT channels
    /// by type): its texts are libmosquitto's error strings and message ids, never the password.
    public var secrets: [String] { [password].compactMap { $0 } }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        try MQTTChannel(name: name, settings: self, onAcknowledgement: context.acknowledgements,
                        onProvenAcknowledgement: context.provenAcknowledgements, logger: context.logger)
    }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = MQTTChannelSettings()
        let allowPlaintext = try c.decodeIfPresent(Bool.self, forKey: .allowPlaintext) ?? d.allowPlaintext
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
            keyFile: try c.decodeIfPresent(String.self, forKey: .keyFile),
            acknowledgeSecret: try c.decodeIfPresent(String.self, forKey: .acknowledgeSecret))
        self.allowPlaintext = allowPlaintext
        acknowledgeMode = try c.word(RawWords<AcknowledgeMode>.self, .acknowledgeMode, default: d.acknowledgeMode)
    }

    public func encodeConfig(to encoder: any Encoder) throws {
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
        try c.encode(allowPlaintext, forKey: .allowPlaintext)
        try c.encode(acknowledgeMode, as: RawWords<AcknowledgeMode>.self, forKey: .acknowledgeMode)
        for (key, value) in [(CodingKeys.username, username), (.password, password), (.device, device),
                             (.clientID, clientID), (.caFile, caFile), (.certFile, certFile), (.keyFile, keyFile),
                             (.acknowledgeSecret, acknowledgeSecret)] {
            try c.encodeOptional(value, forKey: key)
        }
        try c.encodeOptional(port, forKey: .port)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        func problem(_ key: String, _ message: String, _ severity: ConfigProblem.Severity = .error) {
            found.append(ConfigProblem(path + [key], message, severity: severity))
        }
        if host.allSatisfy(\.isWhitespace) { problem("host", "the broker's host name or address is required") }
        if let port, !(1...65_535).contains(port) { problem("port", "\(port) is not a TCP port (1 to 65535)") }
        if username != nil, password == nil { problem("password", "a password is required with username") }
        if password != nil, username == nil { problem("username", "a username is required with password") }
        if password != nil, !tls { found += ConfigCheck.plaintext("the password", to: host, allowed: allowPlaintext, at: path + ["tls"]) }
        if let device, let why = MQTTTopics.levelProblem(device) { problem("device", why) }
        found += bridgeNameProblems(at: path)
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
            // A file on disk, not a setting: missing now (a certificate being renewed, a mount
            // not up yet) it must not keep the alarm from starting; the channel waits for it.
            if access(file, R_OK) != 0 {
                problem(key, "cannot read '\(file)': \(String(cString: strerror(errno))); this channel cannot connect until it can", .warning)
            }
        }
        if let problem = acknowledgementProblem { found.append(ConfigProblem(path + [problem.key], problem.message, severity: problem.severity)) }
        if let problem = tokenModeProblem { found.append(ConfigProblem(path + ["acknowledge-mode"], problem.message, severity: problem.severity)) }
        return found
    }

    /// A bridge has one name: the top-level `device:`. The channel's own `device` is a
    /// deprecated alias that must agree with it; a name that is not one topic level is
    /// shown as the id it becomes; the built-in name is shared by every bridge left at it.
    func bridgeNameProblems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        if let device {
            if let bridgeName, device != MQTTTopics.topicLevel(bridgeName) {
                found.append(ConfigProblem(path + ["device"], "'\(device)' differs from this bridge's name, the top-level "
                    + "device: '\(bridgeName)' (its topics and Home Assistant id: \(topicPrefix)/\(MQTTTopics.topicLevel(bridgeName))/…): "
                    + "a bridge has one name in messages, payloads and MQTT topics; remove this key and set the top-level device:"))
            } else if bridgeName != nil {
                found.append(ConfigProblem(path + ["device"], "deprecated: the top-level device: names this bridge on MQTT too; remove this key",
                                           severity: .warning))
            } else {
                found.append(ConfigProblem(path + ["device"], "deprecated: set the top-level device: \(device) (this bridge's one name "
                    + "in messages, payloads and MQTT topics) and remove this key", severity: .warning))
            }
        }
        guard let bridgeName else {
            if device == nil {
                found.append(ConfigProblem(path, "no top-level device: this bridge is '\(effectiveDevice)' on the broker and "
                    + "'fallguard' in messages; set device: to give it one name, unique on the broker", severity: .warning))
            }
            return found
        }
        if MQTTTopics.levelProblem(bridgeName) != nil {
            found.append(ConfigProblem(path, "this bridge's name '\(bridgeName)' (the top-level device:) is '\(effectiveDevice)' in "
                + "MQTT topics and Home Assistant ids ('/', '+', '#', spaces and control characters become '-', lowercased)",
                severity: .warning))
        } else if bridgeName == Self.sharedName {
            found.append(ConfigProblem(path, "this bridge keeps the example's name '\(bridgeName)' (the top-level device:): every bridge "
                + "left at it shares the same topics and takes the others off the broker; give it its own (room-12, flat-3)",
                severity: .warning))
        }
        return found
    }

    /// The top-level `device:` of the example file and the built-in default.
    static let sharedName = "fallguard"

    /// `acknowledge-mode: token` makes the secret a bearer token on the ack topic: only over
    /// TLS or to a broker on this machine, and said so either way.
    var tokenModeProblem: (message: String, severity: ConfigProblem.Severity)? {
        guard acknowledgeMode == .token else { return nil }
        guard acknowledgeSecret != nil else { return ("token: ignored without acknowledge-secret", .warning) }
        guard tls || ConfigCheck.isLoopback(host) else {
            return ("token: the secret would cross the network in clear on every acknowledgement, and whoever reads "
                + "it once can silence every later alarm: use hmac (the default), or tls", .error)
        }
        return ("token: whoever can read \(MQTTTopics(self).acknowledge) once can silence every later alarm; "
            + "hmac (the default) binds each acknowledgement to its incident and time", .warning)
    }

    /// Who could silence an alarm through the ack topic. Without `acknowledge-secret`, any
    /// client that may publish on `<prefix>/<device>/ack` can; that is tolerable only on a
    /// broker on this machine, or behind TLS with a login (then the broker's access rules
    /// must keep the topic to Home Assistant: docs/notifiers-mqtt-email.md).
    var acknowledgementProblem: (key: String, message: String, severity: ConfigProblem.Severity)? {
        if let acknowledgeSecret {
            return acknowledgeSecret.count < 16
                ? ("acknowledge-secret", "must be at least 16 characters (e.g. openssl rand -hex 16)", .error) : nil
        }
        let topic = MQTTTopics(self).acknowledge
        if ConfigCheck.isLoopback(host) {
            return ("acknowledge-secret", "without it, any program on this machine that connects to the broker can read the "
                + "retained incident and silence the alarm on \(topic): set acknowledge-secret (openssl rand -hex 16)", .warning)
        }
        guard tls, username != nil else {
            return ("acknowledge-secret", "anyone who can publish on \(topic) at \(host) could silence a fall alarm: "
                + "set acknowledge-secret, or use tls with a username and let only Home Assistant publish there", .error)
        }
        return ("acknowledge-secret", "without it, only the broker's access rules keep others from publishing on \(topic): "
            + "allow only Home Assistant's user to write there (docs/notifiers-mqtt-email.md)", .warning)
    }
}

extension [String: any ChannelOptions] {
    /// The same channels with every MQTT channel's ``MQTTChannelSettings/bridgeName`` set to
    /// `device` (the top-level `device:`): a bridge has one name, in topics too.
    func namingMQTTBridges(_ device: String) -> Self {
        mapValues { options in
            guard var mqtt = options as? MQTTChannelSettings else { return options }
            mqtt.bridgeName = device
            return mqtt
        }
    }
}

/// `type: email`. `host` and `from` are required; `password` goes with `username`.
/// Recipients come from the contacts' `email`.
extension EmailChannelSettings: ChannelSection {
    enum CodingKeys: String, CodingKey {
        case host, port, security, username, password, from, timeout
        case fromName = "from-name", caFile = "ca-file", connectTimeout = "connect-timeout"
    }

    public var addressing: ChannelAddressing { .email }

    public var secrets: [String] { [password].compactMap { $0 } }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(EmailChannel(name: name, settings: self, logger: context.logger))
    }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = EmailChannelSettings()
        self.init(
            host: try c.decodeIfPresent(String.self, forKey: .host) ?? d.host,
            port: try c.decodeIfPresent(Int.self, forKey: .port),
            security: try c.word(SMTPSecurityWords.self, .security, default: d.security),
            username: try c.decodeIfPresent(String.self, forKey: .username),
            password: try c.decodeIfPresent(String.self, forKey: .password),
            from: try c.decodeIfPresent(String.self, forKey: .from) ?? d.from,
            fromName: try c.decodeIfPresent(String.self, forKey: .fromName) ?? d.fromName,
            caFile: try c.decodeIfPresent(String.self, forKey: .caFile),
            connectTimeout: try c.decodeIfPresent(Double.self, forKey: .connectTimeout) ?? d.connectTimeout,
            timeout: try c.decodeIfPresent(Double.self, forKey: .timeout) ?? d.timeout)
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(host, forKey: .host)
        try c.encode(security, as: SMTPSecurityWords.self, forKey: .security)
        try c.encode(from, forKey: .from)
        try c.encode(fromName, forKey: .fromName)
        try c.encode(connectTimeout, forKey: .connectTimeout)
        try c.encode(timeout, forKey: .timeout)
        for (key, value) in [(CodingKeys.username, username), (.password, password), (.caFile, caFile)] {
            try c.encodeOptional(value, forKey: key)
        }
        try c.encodeOptional(port, forKey: .port)
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
        found += ConfigCheck.printable(fromName, at: path + ["from-name"])
        if security == .none, !ConfigCheck.isLoopback(host) {
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

enum SMTPSecurityWords: WordList {
    static let words: [(word: String, value: SMTPSecurity)] = [("starttls", .starttls), ("tls", .tls), ("none", .none)]
}
