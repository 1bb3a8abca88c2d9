import Crypto
import FallGuardNotify

/// Every topic one bridge uses. Each bridge owns `<prefix>/<device>/…`, so any number of them
/// share one broker; Home Assistant's configs sit under `<discovery-prefix>/<component>/<node>/`.
public struct MQTTTopics: Sendable, Equatable {
    public let prefix: String
    public let device: String
    public let discoveryPrefix: String

    public init(prefix: String, device: String, discoveryPrefix: String = "homeassistant") {
        (self.prefix, self.device, self.discoveryPrefix) = (prefix, device, discoveryPrefix)
    }

    public init(_ settings: MQTTChannelSettings) {
        self.init(prefix: settings.topicPrefix, device: settings.effectiveDevice,
                  discoveryPrefix: settings.discoveryPrefix)
    }

    /// `<prefix>/<device>`.
    public var base: String { "\(prefix)/\(device)" }
    /// Retained `online`, and `offline` as the last will or on a clean stop.
    public var availability: String { base + "/availability" }
    /// Alerts, QoS 1, not retained: the ``AlertPayload`` JSON.
    public var alert: String { base + "/alert" }
    /// Retained: `monitoring`, `countdown`, `alert-out` or `sensor-fault` (the status file's words).
    public var state: String { base + "/state" }
    /// Retained: `worn`, or `not-worn` while the device lies still, not on the wearer.
    public var worn: String { base + "/worn" }
    /// Retained JSON about the battery and the mains (``MQTTPower``), only on a bridge with a
    /// power supply.
    public var power: String { base + "/power" }
    /// The cellular modem (`MQTTModem`), retained; only with a `modem` channel.
    public var modem: String { base + "/modem" }
    /// Retained JSON about the last incident (``LastIncidentReport``).
    public var lastIncident: String { base + "/incident" }
    /// Subscribed: an incident id, `{"incident": …, "by": …}`, or `{"by": …}` for the current one.
    public var acknowledge: String { base + "/ack" }
    /// Home Assistant's birth and will: discovery is published again when it says `online`.
    public var homeAssistantStatus: String { discoveryPrefix + "/status" }

    /// Home Assistant node id and the start of every unique id: `fallguard_<device>` with only
    /// letters, digits, `_` and `-`.
    public var nodeID: String {
        "fallguard_" + String(device.unicodeScalars.map { c in
            c.isASCII && (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "-")
                ? Character(c) : "_"
        })
    }

    /// `<discovery-prefix>/<component>/<node>/<object>/config`.
    public func discoveryConfig(component: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(nodeID)/\(object)/config"
    }

    /// Why `level` cannot be one topic level (nil when it can).
    public static func levelProblem(_ level: String) -> String? {
        if level.isEmpty { return "must not be empty" }
        if level.unicodeScalars.count > 64 { return "'\(level)' is longer than 64 characters" }
        if level.unicodeScalars.contains(where: { "/+#".unicodeScalars.contains($0) || $0.properties.isWhitespace || $0.value < 0x20 }) {
            return "'\(level)' must not contain '/', '+', '#', spaces or control characters"
        }
        return nil
    }

    /// Why `prefix` cannot start a topic (nil when it can): levels separated by `/`.
    public static func prefixProblem(_ prefix: String) -> String? {
        for level in prefix.split(separator: "/", omittingEmptySubsequences: false) {
            if levelProblem(String(level)) != nil {
                return "'\(prefix)' must be topic levels separated by '/', without '+', '#', spaces or empty levels"
            }
        }
        return nil
    }

    /// The default device id: the topic-safe `hostname`, and with a machine id, `-` and the
    /// first six hex digits of SHA-256 over `fallguard-mqtt:<machine id>` (never the id itself,
    /// which systemd asks not to publish).
    public static func deviceName(hostname: String, machineID: String?) -> String {
        let host = topicSafe(hostname)
        guard let machineID else { return host }
        let digest = SHA256.hash(data: Array("fallguard-mqtt:\(machineID)".utf8))
        return String(host.prefix(57)) + "-" + digest.prefix(3).lowercaseHex
    }

    /// A bridge's name as one topic level: `name` itself when it is one (`room-12`, `Flat3`),
    /// else ``topicSafe(_:)`` (`Room 12` → `room-12`).
    public static func topicLevel(_ name: String) -> String {
        levelProblem(name) == nil ? name : topicSafe(name)
    }

    /// `name` with every character that cannot sit in a topic level replaced by `-`.
    public static func topicSafe(_ name: String) -> String {
        let safe = String(name.lowercased().unicodeScalars.prefix(64).map { c in
            levelProblem(String(c)) == nil ? Character(c) : "-"
        })
        return safe.isEmpty ? "fallguard" : safe
    }
}
