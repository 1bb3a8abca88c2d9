import FallGuardCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An MQTT channel's broker, identity, topics and timings. `password` goes with `username`;
/// `tls` switches to TLS (port 8883 by default) with the system's CAs unless `caFile` names one.
public struct MQTTChannelSettings: Sendable, Equatable {
    /// The broker.
    public var host: String
    /// nil means 1883, or 8883 with TLS.
    public var port: Int?
    public var username: String?
    public var password: String?
    /// This bridge's name: the top-level `device:`, which the configuration sets here. It is the
    /// device id in the topics, the client id and Home Assistant (made one topic level, see
    /// ``effectiveDevice``). Must be unique per broker: many bridges share one.
    public var bridgeName: String?
    /// Deprecated: the channel's own `device` option, from before the top-level `device:` named
    /// the bridge on MQTT too. Taken only without a top-level `device:`; with one, it must agree.
    public var device: String?
    /// MQTT client id (nil means `fallguard-<device>`).
    public var clientID: String?
    /// First topic level: topics are `<topicPrefix>/<device>/…`.
    public var topicPrefix: String
    /// Publish Home Assistant discovery configs.
    public var discovery: Bool
    /// Home Assistant's discovery prefix.
    public var discoveryPrefix: String
    /// Seconds between keep-alive pings; the broker sends the last will after 1.5 times this
    /// without a word (at once when the connection breaks).
    ///
    /// Default 8 s: a hung bridge must show offline within 20 s (issue 37). mosquitto 2 drops a
    /// client once more than ⌊1.5 × keepalive⌋ whole seconds passed since its last packet, and
    /// looks for such clients only every 6 s (src/keepalive.c: `last_check + 5 < now`, in whole
    /// seconds): at most ⌊1.5 × keepalive⌋ + 7 s after the bridge hangs, 19 s at 8 (22 s at 10,
    /// 52 s at the former 30). The cost: one PINGREQ every 8 s when the bridge is idle.
    public var keepalive: Int
    /// Seconds one alert may wait for the broker's PUBACK, connecting included, before it
    /// fails as transient.
    public var publishTimeout: Double
    /// First reconnect delay in seconds, doubled up to `reconnectDelayMax`.
    public var reconnectDelay: Int
    /// Default 4 s: attempts 1, 2, 4, 4, … s apart while the broker is away, so every client is
    /// back within 4 s and a round trip of the broker's return (issue 37: within 5 s; the former
    /// 60 s left bridges away up to a minute after a restart). A refused attempt costs the broker
    /// a TCP reset (with TLS, a handshake): 50 a second for 200 bridges at most.
    public var reconnectDelayMax: Int
    public var tls: Bool
    /// PEM CA certificate to trust; nil means the system's (`/etc/ssl/certs`).
    public var caFile: String?
    /// PEM client certificate and key for brokers that require one.
    public var certFile: String?
    public var keyFile: String?
    /// The per-device secret an acknowledgement must prove it knows (``MQTTAcknowledgementGate``);
    /// nil: any ack naming the active incident is taken, so the broker's access rules must
    /// keep others off the ack topic.
    public var acknowledgeSecret: String?
    /// How an acknowledgement proves it knows `acknowledgeSecret` (``AcknowledgeMode``).
    public var acknowledgeMode: AcknowledgeMode = .hmac
    /// The administrator accepts that a password goes to a broker on another machine without
    /// TLS, in clear. Only the configuration check reads it.
    public var allowPlaintext = false

    public init(host: String = "localhost", port: Int? = nil, username: String? = nil,
                password: String? = nil, device: String? = nil, clientID: String? = nil,
                topicPrefix: String = "fallguard", discovery: Bool = true,
                discoveryPrefix: String = "homeassistant", keepalive: Int = 8,
                publishTimeout: Double = 10, reconnectDelay: Int = 1, reconnectDelayMax: Int = 4,
                tls: Bool = false, caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil,
                acknowledgeSecret: String? = nil) {
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
        self.acknowledgeSecret = acknowledgeSecret
    }

    /// The port in use: `port`, else 8883 with TLS, else 1883.
    public var effectivePort: Int { port ?? (tls ? 8883 : 1883) }

    /// The device id in use: ``bridgeName`` made one topic level (``MQTTTopics/topicLevel(_:)``),
    /// else the deprecated `device`, else this machine's hostname made topic-safe with six hex
    /// digits of a hash of `/etc/machine-id` (`raspberrypi-3fa9c2`): two bridges cloned from
    /// one image keep the hostname `raspberrypi` but never share topics or a client id.
    public var effectiveDevice: String {
        if let bridgeName { return MQTTTopics.topicLevel(bridgeName) }
        return device ?? MQTTTopics.deviceName(hostname: currentHostname(), machineID: currentMachineID())
    }

    /// The client id in use: `clientID`, else `fallguard-<device>`.
    public var effectiveClientID: String { clientID ?? "fallguard-\(effectiveDevice)" }
}

/// How an acknowledgement proves the secret.
public enum AcknowledgeMode: String, Sendable, Equatable, CaseIterable {
    /// HMAC-SHA256 over this bridge, the incident and a time within 300 s: what a reader of the
    /// ack topic sees cannot silence a later alarm. The default.
    case hmac
    /// The secret itself is also taken (what a Home Assistant script can send): whoever reads
    /// the ack topic once can silence every later alarm, so only over TLS or to a broker on
    /// this machine.
    case token
}

/// `/etc/machine-id` (systemd's id of this installation), nil when there is none.
func currentMachineID() -> String? {
    guard let text = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8) else { return nil }
    let id = String(text.trimmingWhitespace)
    return id.isEmpty ? nil : id
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
