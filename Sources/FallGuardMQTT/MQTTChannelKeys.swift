import FallGuardConfigKeys
import FallGuardNotify

// The `type: mqtt` channel's keys, declared here beside its settings: adding a channel touches
// its own module, the channel list (`ChannelTypes.all` in FallGuardConfig) and the example file.

/// `type: mqtt`. Every key but `host` has a default; `password` goes with `username`;
/// `tls: true` switches to TLS (port 8883 by default) with the system's CAs unless `ca-file`
/// names one. A password to a broker on another machine needs TLS, or `allow-plaintext: true`.
extension MQTTChannelSettings: ChannelOptions, KeyedSection {
    public init() { self.init(host: "localhost") }

    public static var keys: [ConfigKey<Self>] {
        [.value("host", \.host), .optional("port", \.port, in: 1...65_535), .optional("username", \.username),
         .optional("password", \.password, secret: true), .optional("device", \.device), .optional("client-id", \.clientID),
         .value("topic-prefix", \.topicPrefix), .value("discovery", \.discovery), .value("discovery-prefix", \.discoveryPrefix),
         .value("keepalive", \.keepalive, in: 5...3_600, unit: " s"), .value("publish-timeout", \.publishTimeout, in: 0.1...300, unit: " s"),
         .value("reconnect-delay", \.reconnectDelay, in: 1...3_600, unit: " s"), .value("reconnect-delay-max", \.reconnectDelayMax),
         .value("tls", \.tls), .value("allow-plaintext", \.allowPlaintext), .optional("ca-file", \.caFile),
         .optional("cert-file", \.certFile), .optional("key-file", \.keyFile),
         .optional("acknowledge-secret", \.acknowledgeSecret, secret: true),
         .word("acknowledge-mode", \.acknowledgeMode, RawWords<AcknowledgeMode>.self)]
    }

    public var addressing: ChannelAddressing { .broadcast }

    /// The password and the acknowledgement secret. The channel is not wrapped in a redactor (the
    /// daemon finds its MQTT channels by type): its texts are libmosquitto's error strings and
    /// message ids, never the password.
    public var secrets: [String] { secretValues }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        try MQTTChannel(name: name, settings: self, onAcknowledgement: context.acknowledgements,
                        onProvenAcknowledgement: context.provenAcknowledgements, onCallStep: context.callSteps,
                        clockSynchronized: context.clockSynchronized, logger: context.logger)
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        func problem(_ key: PartialKeyPath<Self>, _ message: String, _ severity: ConfigProblem.Severity = .error) {
            found.append(ConfigProblem(Self.at(path, key), message, severity: severity))
        }
        if host.allSatisfy(\.isWhitespace) { problem(\.host, "the broker's host name or address is required") }
        if username != nil, password == nil { problem(\.password, "a password is required with username") }
        if password != nil, username == nil { problem(\.username, "a username is required with password") }
        if password != nil, !tls { found += ConfigCheck.plaintext("the password", to: host, allowed: allowPlaintext, at: Self.at(path, \.tls)) }
        if let device, let why = MQTTTopics.levelProblem(device) { problem(\.device, why) }
        found += bridgeNameProblems(at: path)
        if let clientID, clientID.isEmpty || clientID.utf8.count > 65_535 { problem(\.clientID, "must not be empty") }
        for (key, value) in [(\Self.topicPrefix, topicPrefix), (\.discoveryPrefix, discoveryPrefix)] {
            if let why = MQTTTopics.prefixProblem(value) { problem(key, why) }
        }
        if !(reconnectDelay...max(reconnectDelay, 3_600)).contains(reconnectDelayMax) {
            problem(\.reconnectDelayMax, "\(reconnectDelayMax) s must be between reconnect-delay (\(reconnectDelay) s) and 3600 s")
        }
        if certFile != nil, keyFile == nil { problem(\.keyFile, "a key file is required with cert-file") }
        if keyFile != nil, certFile == nil { problem(\.certFile, "a certificate file is required with key-file") }
        for (key, file) in [(\Self.caFile, caFile), (\.certFile, certFile), (\.keyFile, keyFile)] {
            guard let file else { continue }
            if !tls { problem(key, "ignored unless tls is true", .warning) }
            // A file on disk, not a setting: missing now (a certificate being renewed, a mount
            // not up yet) it must not keep the alarm from starting; the channel waits for it.
            if let why = ConfigCheck.unreadable(file) {
                problem(key, "cannot read '\(file)': \(why); this channel cannot connect until it can", .warning)
            }
        }
        if let problem = acknowledgementProblem { found.append(ConfigProblem(Self.at(path, \.acknowledgeSecret), problem.message, severity: problem.severity)) }
        if let problem = tokenModeProblem { found.append(ConfigProblem(Self.at(path, \.acknowledgeMode), problem.message, severity: problem.severity)) }
        return found
    }

    /// A bridge has one name: the top-level `device:`. The channel's own `device` is a
    /// deprecated alias that must agree with it; a name that is not one topic level is
    /// shown as the id it becomes; the built-in name is shared by every bridge left at it.
    func bridgeNameProblems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        if let device {
            if let bridgeName, device != MQTTTopics.topicLevel(bridgeName) {
                found.append(ConfigProblem(Self.at(path, \.device), "'\(device)' differs from this bridge's name, the top-level "
                    + "device: '\(bridgeName)' (its topics and Home Assistant id: \(topicPrefix)/\(MQTTTopics.topicLevel(bridgeName))/…): "
                    + "a bridge has one name in messages, payloads and MQTT topics; remove this key and set the top-level device:"))
            } else if bridgeName != nil {
                found.append(ConfigProblem(Self.at(path, \.device), "deprecated: the top-level device: names this bridge on MQTT too; remove this key",
                                           severity: .warning))
            } else {
                found.append(ConfigProblem(Self.at(path, \.device), "deprecated: set the top-level device: \(device) (this bridge's one name "
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
    var acknowledgementProblem: (message: String, severity: ConfigProblem.Severity)? {
        if let acknowledgeSecret {
            return acknowledgeSecret.count < 16
                ? ("must be at least 16 characters (e.g. openssl rand -hex 16)", .error) : nil
        }
        let topic = MQTTTopics(self).acknowledge
        if ConfigCheck.isLoopback(host) {
            return ("without it, any program on this machine that connects to the broker can read the "
                + "retained incident and silence the alarm on \(topic): set acknowledge-secret (openssl rand -hex 16)", .warning)
        }
        guard tls, username != nil else {
            return ("anyone who can publish on \(topic) at \(host) could silence a fall alarm: "
                + "set acknowledge-secret, or use tls with a username and let only Home Assistant publish there", .error)
        }
        return ("without it, only the broker's access rules keep others from publishing on \(topic): "
            + "allow only Home Assistant's user to write there (docs/notifiers-mqtt-email.md)", .warning)
    }
}
