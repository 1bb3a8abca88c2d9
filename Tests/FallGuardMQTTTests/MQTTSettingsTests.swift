import FallGuardCore
@testable import FallGuardMQTT
import Foundation
import Testing
import FallGuardTestSupport

@Suite struct MQTTSettingsTests {
    // Reading the keys: FallGuardConfigTests' ChannelSectionTests.

    @Test func theEffectiveValuesFillTheGaps() {
        let s = MQTTChannelSettings()
        #expect(s.host == "localhost" && s.effectivePort == 1883 && s.topicPrefix == "fallguard")
        #expect(s.effectiveDevice == MQTTTopics.topicSafe(currentHostname()))
        #expect(s.effectiveClientID == "fallguard-\(s.effectiveDevice)")
        #expect(MQTTChannelSettings(tls: true).effectivePort == 8883)
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
        #expect(objects[1]["options"] as? [String] == AlarmStatus.allCases.map(\.rawValue))
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

    /// fuzz/corpus/acknowledgement, the seeds and what fuzzing found (bench/fuzz.sh): each payload
    /// is an acknowledgement within the limits or an error that says why.
    @Test func everyFuzzCorpusPayloadIsAnAcknowledgementOrSaysWhy() throws {
        var parsed: [String: MQTTAcknowledgement] = [:]
        for (name, payload) in fuzzCorpus("acknowledgement") {
            do {
                let ack = try MQTTAcknowledgement(payload: payload)
                #expect(ack.incident.map { !$0.isEmpty && $0.unicodeScalars.count <= 64 } ?? true, "\(name)")
                #expect(!ack.by.isEmpty && ack.by.unicodeScalars.count <= 100, "\(name)")
                parsed[name] = ack
            } catch {
                #expect(!error.description.isEmpty, "\(name)")
            }
        }
        #expect(parsed["id"] == MQTTAcknowledgement(incident: "FG-3", by: "mqtt"))
        #expect(parsed["incident-by.json"] == MQTTAcknowledgement(incident: "FG-3", by: "Anna"))
        #expect(parsed["by.json"] == MQTTAcknowledgement(incident: nil, by: "Anna"))
        #expect(parsed["empty"] == MQTTAcknowledgement(incident: nil, by: "mqtt"))
    }
}
