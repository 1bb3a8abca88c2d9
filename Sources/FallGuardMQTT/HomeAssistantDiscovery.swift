import Foundation
import FallGuardCore

/// The retained Home Assistant MQTT discovery configs of one bridge: a `binary_sensor` "Fall"
/// (on while an alert is out), a `binary_sensor` "Not worn" (a problem while the device lies
/// still, not on the wearer), a `sensor` "State", a `sensor` "Last incident" (with the
/// incident's JSON as attributes) and a `button` "Acknowledge" (left out when the bridge has an
/// `acknowledge-secret`: a retained config would publish it). All share one `device` block
/// and the bridge's availability topic; unique ids start with the node id. Each suggests its
/// entity id with `default_entity_id` (`binary_sensor.fallguard_hall_fall`), which replaced
/// `object_id` in Home Assistant 2025.10 (`object_id` is ignored from 2026.4).
public struct HomeAssistantDiscovery: Sendable {
    public let topics: MQTTTopics
    /// Whether the "Acknowledge" button is discovered.
    public let acknowledgeButton: Bool

    public init(topics: MQTTTopics, acknowledgeButton: Bool = true) {
        (self.topics, self.acknowledgeButton) = (topics, acknowledgeButton)
    }

    /// One retained config message.
    public struct Config: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
    }

    /// What the "Acknowledge" button publishes on the ack topic: the id the "Last incident"
    /// sensor shows when it is pressed, so a press acknowledges that incident and no other (an
    /// incident that is no longer the active alert is not acknowledged by it).
    public var buttonTemplate: String {
        let lastIncident = "sensor." + Self.slug("\(topics.nodeID)_last_incident")
        return #"{"incident": "{{ states('"# + lastIncident + #"') }}", "by": "Home Assistant"}"#
    }

    /// Config topics to clear (an empty retained message): the button's, when it is not discovered.
    public var withdrawn: [String] {
        acknowledgeButton ? [] : [topics.discoveryConfig(component: "button", object: "acknowledge")]
    }

    /// The configs, in a fixed order: fall, not worn, state, last incident, and the button.
    public var configs: [Config] {
        let entities: [(component: String, object: String, fields: Entity)] = [
            ("binary_sensor", "fall", Entity(
                name: "Fall", deviceClass: "safety", stateTopic: topics.state,
                valueTemplate: "{{ 'ON' if value == 'alert-out' else 'OFF' }}")),
            ("binary_sensor", "not_worn", Entity(
                name: "Not worn", deviceClass: "problem", stateTopic: topics.worn,
                valueTemplate: "{{ 'ON' if value == 'not-worn' else 'OFF' }}", icon: "mdi:watch-off")),
            ("sensor", "state", Entity(
                name: "State", deviceClass: "enum", stateTopic: topics.state,
                options: AlarmStatus.allCases.map(\.rawValue), icon: "mdi:human-handsdown")),
            ("sensor", "last_incident", Entity(
                name: "Last incident", stateTopic: topics.lastIncident,
                valueTemplate: "{{ value_json.incident }}", jsonAttributesTopic: topics.lastIncident,
                icon: "mdi:alert-circle-outline")),
            ("button", "acknowledge", Entity(
                name: "Acknowledge", commandTopic: topics.acknowledge,
                commandTemplate: buttonTemplate, icon: "mdi:check-circle-outline")),
        ]
        return finished(entities.filter { acknowledgeButton || $0.component != "button" })
    }

    /// The entities with the fields every one carries: ids, availability, device.
    private func finished(_ entities: [(component: String, object: String, fields: Entity)]) -> [Config] {
        entities.map { e in
            var fields = e.fields
            fields.uniqueID = "\(topics.nodeID)_\(e.object)"
            fields.defaultEntityID = "\(e.component).\(Self.slug("\(topics.nodeID)_\(e.object)"))"
            fields.availabilityTopic = topics.availability
            fields.device = DeviceBlock(identifiers: [topics.nodeID], name: "FallGuard \(topics.device)")
            return Config(topic: topics.discoveryConfig(component: e.component, object: e.object),
                          payload: Self.json(fields))
        }
    }

    /// The power entities, discovered once the bridge has a power supply to show: a `sensor`
    /// "Battery" (percent, Home Assistant's battery class) and a `binary_sensor` "Mains" (power
    /// class: on while the mains feeds the device).
    public func powerConfigs(battery: Bool, mains: Bool) -> [Config] {
        var entities: [(component: String, object: String, fields: Entity)] = []
        if battery {
            entities.append(("sensor", "battery", Entity(
                name: "Battery", deviceClass: "battery", stateTopic: topics.power,
                valueTemplate: "{{ value_json.battery }}", unitOfMeasurement: "%", stateClass: "measurement")))
        }
        if mains {
            entities.append(("binary_sensor", "mains", Entity(
                name: "Mains", deviceClass: "power", stateTopic: topics.power,
                valueTemplate: "{{ 'ON' if value_json.mains == 'online' else 'OFF' }}")))
        }
        return finished(entities)
    }

    /// One entity's discovery config; absent fields are left out of the JSON.
    struct Entity: Encodable {
        var name: String
        var deviceClass: String?
        var stateTopic: String?
        var valueTemplate: String?
        var options: [String]?
        var jsonAttributesTopic: String?
        var commandTopic: String?
        var commandTemplate: String?
        var icon: String?
        var unitOfMeasurement: String?
        var stateClass: String?
        var uniqueID = ""
        var defaultEntityID = ""
        var availabilityTopic = ""
        var payloadAvailable = MQTTAvailability.online
        var payloadNotAvailable = MQTTAvailability.offline
        var qos = 1
        var device = DeviceBlock(identifiers: [], name: "")

        enum CodingKeys: String, CodingKey {
            case name, options, icon, qos, device
            case deviceClass = "device_class", stateTopic = "state_topic", valueTemplate = "value_template"
            case jsonAttributesTopic = "json_attributes_topic", commandTopic = "command_topic"
            case unitOfMeasurement = "unit_of_measurement", stateClass = "state_class"
            case commandTemplate = "command_template", uniqueID = "unique_id", defaultEntityID = "default_entity_id"
            case availabilityTopic = "availability_topic", payloadAvailable = "payload_available"
            case payloadNotAvailable = "payload_not_available"
        }
    }

    struct DeviceBlock: Encodable {
        var identifiers: [String]
        var name: String
        var manufacturer = "FallGuard"
        var model = "Fall-detection sensor bridge"
    }

    /// An entity id's object part as Home Assistant writes it: lower-case letters, digits and
    /// single underscores (`fallguard_flat-3` → `fallguard_flat_3`).
    static func slug(_ text: String) -> String {
        var out = ""
        for c in text.lowercased().unicodeScalars {
            let keep = ("a"..."z").contains(c) || ("0"..."9").contains(c)
            if keep { out.unicodeScalars.append(c) } else if !out.hasSuffix("_") { out += "_" }
        }
        while out.hasSuffix("_") { out.removeLast() }
        while out.hasPrefix("_") { out.removeFirst() }
        return out
    }

    /// Sorted keys, unescaped slashes. JSONEncoder, not JSONSerialization: the latter sorts keys
    /// with ICU's collation, and opening ICU's data costs the bridge about 1.5 MB of memory.
    static func json<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only strings, numbers and arrays of them go in: encoding cannot fail.
        return [UInt8](try! encoder.encode(value))
    }
}

/// The availability topic's two payloads.
public enum MQTTAvailability {
    public static let online = "online"
    public static let offline = "offline"
}
