import FallGuardCore
@testable import FallGuardMQTT
import Foundation
import Testing

@Suite struct MQTTSettingsTests {
    func decode(_ json: String) throws -> MQTTChannelSettings {
        try JSONDecoder().decode(MQTTChannelSettings.self, from: Data(json.utf8))
    }

    @Test func missingKeysGetTheDocumentedDefaults() throws {
        let s = try decode("{}")
        #expect(s == MQTTChannelSettings())
        #expect(s.host == "localhost" && s.effectivePort == 1883 && s.topicPrefix == "fallguard")
        #expect(s.discovery && s.discoveryPrefix == "homeassistant" && s.keepalive == 30 && s.publishTimeout == 10)
        #expect(s.effectiveDevice == MQTTTopics.topicSafe(currentHostname()))
        #expect(s.effectiveClientID == "fallguard-\(s.effectiveDevice)")
        #expect(s.problems(at: ["channels", "mqtt"]).isEmpty)
        #expect(try decode(#"{"tls": true}"#).effectivePort == 8883)
    }

    @Test func kebabCaseKeysSurviveARoundTrip() throws {
        let json = #"{"host":"broker.lan","port":1884,"username":"u","password":"p","device":"flat-3","client-id":"c","topic-prefix":"care/home-1","discovery":false,"discovery-prefix":"ha","keepalive":60,"publish-timeout":2.5,"reconnect-delay":2,"reconnect-delay-max":30,"tls":true,"ca-file":"/etc/hostname"}"#
        let s = try decode(json)
        #expect(s.topicPrefix == "care/home-1" && s.clientID == "c" && s.publishTimeout == 2.5 && s.caFile == "/etc/hostname")
        let again = try decode(String(decoding: try JSONEncoder().encode(s), as: UTF8.self))
        #expect(again == s)
        // Defaults encode every key too (nil ones as null), so none looks unknown to the loader.
        let keys = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(MQTTChannelSettings())) as? [String: Any]).keys
        #expect(Set(keys) == ["host", "port", "username", "password", "device", "client-id", "topic-prefix", "discovery",
                              "discovery-prefix", "keepalive", "publish-timeout", "reconnect-delay", "reconnect-delay-max",
                              "tls", "ca-file", "cert-file", "key-file"])
        #expect(s.problems(at: ["channels", "mqtt"]).isEmpty)
    }

    @Test func problemsNameTheirKeys() throws {
        let s = MQTTChannelSettings(host: " ", port: 70_000, username: "u", device: "a/b", topicPrefix: "fallguard/#",
                                    keepalive: 1, publishTimeout: .infinity, reconnectDelay: 5, reconnectDelayMax: 2,
                                    tls: false, caFile: "/nonexistent/ca.pem", certFile: "/etc/hostname")
        let problems = s.problems(at: ["channels", "home"])
        let keys = Set(problems.map(\.key))
        for key in ["host", "port", "password", "device", "topic-prefix", "keepalive", "publish-timeout",
                    "reconnect-delay-max", "key-file", "ca-file", "cert-file"] {
            #expect(keys.contains("channels.home.\(key)"), "\(key): \(problems)")
        }
        #expect(problems.contains { $0.key == "channels.home.ca-file" && $0.message.contains("/nonexistent/ca.pem") })
        #expect(problems.contains { $0.key == "channels.home.cert-file" && $0.severity == .warning })
    }

    @Test func topicsGiveEachBridgeItsOwnBranch() {
        let t = MQTTTopics(prefix: "care", device: "flat 3.b")
        #expect(t.alert == "care/flat 3.b/alert" && t.availability == "care/flat 3.b/availability")
        #expect(t.acknowledge == "care/flat 3.b/ack" && t.state == "care/flat 3.b/state" && t.lastIncident == "care/flat 3.b/incident")
        #expect(t.nodeID == "fallguard_flat_3_b")
        #expect(t.discoveryConfig(component: "button", object: "acknowledge") == "homeassistant/button/fallguard_flat_3_b/acknowledge/config")
        #expect(MQTTTopics.topicSafe("Pi+Kitchen/1") == "pi-kitchen-1")
        #expect(MQTTTopics.levelProblem("ok-name") == nil)
        #expect(MQTTTopics.prefixProblem("a//b") != nil && MQTTTopics.prefixProblem("a/b") == nil)
    }

    @Test func discoveryDescribesFourEntitiesOfOneDevice() throws {
        let configs = HomeAssistantDiscovery(topics: MQTTTopics(prefix: "fallguard", device: "hall")).configs
        #expect(configs.map(\.topic) == [
            "homeassistant/binary_sensor/fallguard_hall/fall/config", "homeassistant/sensor/fallguard_hall/state/config",
            "homeassistant/sensor/fallguard_hall/last_incident/config", "homeassistant/button/fallguard_hall/acknowledge/config",
        ])
        let objects = try configs.map { try #require(try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]) }
        #expect(objects[0]["value_template"] as? String == "{{ 'ON' if value == 'alert-out' else 'OFF' }}")
        #expect(objects[0]["device_class"] as? String == "safety")
        #expect(objects[1]["options"] as? [String] == StatusIndicator.allCases.map(\.rawValue))
        #expect(objects[3]["command_topic"] as? String == "fallguard/hall/ack")
        #expect(objects[3]["payload_press"] as? String == HomeAssistantDiscovery.buttonPayload)
        #expect(Set(objects.compactMap { $0["unique_id"] as? String }).count == 4)
        // Home Assistant 2025.10+: default_entity_id (domain included), no deprecated object_id.
        #expect(objects.map { $0["default_entity_id"] as? String } == [
            "binary_sensor.fallguard_hall_fall", "sensor.fallguard_hall_state",
            "sensor.fallguard_hall_last_incident", "button.fallguard_hall_acknowledge",
        ])
        #expect(objects.allSatisfy { $0["object_id"] == nil })
    }

    @Test func acknowledgementPayloads() throws {
        #expect(try MQTTAcknowledgement(payload: Array(" FG-3\n".utf8)) == MQTTAcknowledgement(incident: "FG-3", by: "mqtt"))
        #expect(try MQTTAcknowledgement(payload: Array(#"{"incident":"FG-3","by":"Anna"}"#.utf8)) == MQTTAcknowledgement(incident: "FG-3", by: "Anna"))
        #expect(try MQTTAcknowledgement(payload: Array(#"{"by":"Home Assistant"}"#.utf8)) == MQTTAcknowledgement(incident: nil, by: "Home Assistant"))
        #expect(try MQTTAcknowledgement(payload: []) == MQTTAcknowledgement(incident: nil, by: "mqtt"))
        #expect(throws: MQTTAcknowledgementError.self) { try MQTTAcknowledgement(payload: Array(#"{"incident":3}"#.utf8)) }
        #expect(throws: MQTTAcknowledgementError.self) { try MQTTAcknowledgement(payload: Array("two words".utf8)) }
        #expect(throws: MQTTAcknowledgementError.self) { try MQTTAcknowledgement(payload: [0xFF, 0xFE]) }
        #expect(throws: MQTTAcknowledgementError.self) { try MQTTAcknowledgement(payload: Array(#"{"by":"a\u0007b"}"#.utf8)) }
    }
}
