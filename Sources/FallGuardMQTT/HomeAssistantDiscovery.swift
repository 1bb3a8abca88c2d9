import Foundation

/// The retained Home Assistant MQTT discovery configs of one bridge: a `binary_sensor` "Fall"
/// (on while an alert is out), a `sensor` "State", a `sensor` "Last incident" (with the
/// incident's JSON as attributes) and a `button` "Acknowledge". All share one `device` block
/// and the bridge's availability topic; unique ids start with the node id.
public struct HomeAssistantDiscovery: Sendable {
    public let topics: MQTTTopics

    public init(topics: MQTTTopics) { self.topics = topics }

    /// One retained config message.
    public struct Config: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
    }

    /// What the "Acknowledge" button publishes on the ack topic.
    public static let buttonPayload = #"{"by":"Home Assistant"}"#

    /// The four configs, in a fixed order.
    public var configs: [Config] {
        let entities: [(component: String, object: String, fields: [String: Any])] = [
            ("binary_sensor", "fall", [
                "name": "Fall", "device_class": "safety", "state_topic": topics.state,
                "value_template": "{{ 'ON' if value == 'alert-out' else 'OFF' }}",
            ]),
            ("sensor", "state", [
                "name": "State", "device_class": "enum", "state_topic": topics.state,
                "options": ["monitoring", "countdown", "alert-out", "fault"], "icon": "mdi:human-handsdown",
            ]),
            ("sensor", "last_incident", [
                "name": "Last incident", "state_topic": topics.lastIncident,
                "value_template": "{{ value_json.incident }}", "json_attributes_topic": topics.lastIncident,
                "icon": "mdi:alert-circle-outline",
            ]),
            ("button", "acknowledge", [
                "name": "Acknowledge", "command_topic": topics.acknowledge,
                "payload_press": Self.buttonPayload, "icon": "mdi:check-circle-outline",
            ]),
        ]
        return entities.map { e in
            var fields = e.fields
            fields["unique_id"] = "\(topics.nodeID)_\(e.object)"
            fields["object_id"] = "\(topics.nodeID)_\(e.object)"
            fields["availability_topic"] = topics.availability
            fields["payload_available"] = MQTTAvailability.online
            fields["payload_not_available"] = MQTTAvailability.offline
            fields["qos"] = 1
            fields["device"] = device
            return Config(topic: topics.discoveryConfig(component: e.component, object: e.object),
                          payload: Self.json(fields))
        }
    }

    private var device: [String: Any] {
        ["identifiers": [topics.nodeID], "name": "FallGuard \(topics.device)",
         "manufacturer": "FallGuard", "model": "Fall-detection sensor bridge"]
    }

    static func json(_ object: [String: Any]) -> [UInt8] {
        // Only strings, numbers, arrays and dictionaries go in: serialisation cannot fail.
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return [UInt8](data)
    }
}

/// The availability topic's two payloads.
public enum MQTTAvailability {
    public static let online = "online"
    public static let offline = "offline"
}
