import FallGuardCore
@testable import FallGuardMQTT
import FallGuardNotify
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
import FallGuardTestSupport
#endif

/// Issue 40 item 1: one message of any size on a topic a bridge or the station reads must never
/// reach them. The real broker is told the largest packet on CONNECT (MQTT 5) and drops larger
/// messages for that client; what is under the limit but over a topic's own cap is refused.
@Suite(.enabled(if: mosquittoMissing == nil, "\(mosquittoMissing ?? "")"))
struct MQTTBoundedTests {
    /// A file of `bytes` bytes for `mosquitto_pub -f`.
    static func bigFile(_ bytes: Int) throws -> String {
        let path = temporaryFolder("mqtt-big") + "/payload"
        try Data(repeating: UInt8(ascii: "x"), count: bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func publishFile(_ broker: MosquittoBroker, topic: String, _ path: String, retain: Bool) throws {
        try run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", topic, "-f", path]
            + (retain ? ["-r"] : []))
    }

    /// 3 MB retained on the ack topic before the bridge connects, 3 MB live after, 3 MB on
    /// Home Assistant's status: the broker sends none of them to the bridge (its log says it
    /// dropped them for the bridge's client id), and acknowledgements and alerts go on.
    @Test func anOversizedMessageOnTheBridgesTopicsIsNeverSentToIt() async throws {
        let broker = try await MosquittoBroker()
        let big = try Self.bigFile(3_000_000)
        try Self.publishFile(broker, topic: "fallguard/den/ack", big, retain: true)
        let received = Mutex<[String]>([])
        let settings = MQTTChannelSettings(host: "127.0.0.1", port: broker.port, device: "den", publishTimeout: 5,
                                           reconnectDelay: 1, reconnectDelayMax: 1)
        let mqtt = try MQTTChannel(settings: settings) { incident, by in received.withLock { $0.append("\(incident) by \(by)") } }
        mqtt.start()
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-1")))
        #expect(await broker.waitForLog(timeout: 5) { $0.contains("Dropping too large outgoing PUBLISH for \(settings.effectiveClientID)") },
                "the retained 3 MB message was sent to the bridge:\n\(broker.log.suffix(2000))")
        let droppedBefore = broker.log.components(separatedBy: "Dropping too large outgoing PUBLISH for \(settings.effectiveClientID)").count
        try Self.publishFile(broker, topic: "fallguard/den/ack", big, retain: false)
        try Self.publishFile(broker, topic: "homeassistant/status", big, retain: false)
        #expect(await broker.waitForLog(timeout: 5) {
            $0.components(separatedBy: "Dropping too large outgoing PUBLISH for \(settings.effectiveClientID)").count >= droppedBefore + 2
        })
        try mosquittoPublish(broker, topic: "fallguard/den/ack", #"{"incident": "FG-1", "by": "Anna"}"#)
        #expect(await until(5) { !received.withLock { $0 }.isEmpty })
        let receipt = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-2")))
        #expect(receipt.providerID != nil)
        await mqtt.stop()
        #expect(received.withLock { $0 } == ["FG-1 by Anna"])
    }

    /// Under the packet limit but over an acknowledgement's cap (2 KiB): refused before it is
    /// parsed, and cleared from the broker; a normal one after it still acknowledges.
    @Test func anAcknowledgementOverItsCapIsRefusedAndCleared() async throws {
        let broker = try await MosquittoBroker()
        let received = Mutex<[String]>([])
        let mqtt = try channel(broker, device: "attic") { incident, _ in received.withLock { $0.append(incident) } }
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-3")))
        let padded = #"{"incident": "FG-3", "by": "\#(String(repeating: "A", count: 4000))"}"#
        try mosquittoPublish(broker, topic: "fallguard/attic/ack", padded)
        try mosquittoPublish(broker, topic: "fallguard/attic/ack", "FG-3")
        #expect(await until(5) { !received.withLock { $0 }.isEmpty })
        try await Task.sleep(for: .milliseconds(200))
        await mqtt.stop()
        #expect(received.withLock { $0 } == ["FG-3"], "only the one within the cap")
    }

    /// The station reads `<prefix>/#`: a bridge's 3 MB retained state and a 1 MB alert never
    /// reach it, and the messages after them do.
    @Test func theStationNeverReadsAnOversizedMessage() async throws {
        let broker = try await MosquittoBroker()
        try Self.publishFile(broker, topic: "fallguard/room-9/state", try Self.bigFile(3_000_000), retain: true)
        let largest = Mutex(0)
        let topics = Mutex<[String]>([])
        let settings = MQTTChannelSettings(host: "127.0.0.1", port: broker.port, device: "station", publishTimeout: 5,
                                           reconnectDelay: 1, reconnectDelayMax: 1)
        let station = try MQTTSiteClient(settings: settings, clientID: "station-test") { topic, payload, _ in
            largest.withLock { $0 = max($0, payload.count) }
            topics.withLock { $0.append(topic) }
        }
        station.start()
        #expect(await broker.waitForSubscription(of: "station-test"))
        try Self.publishFile(broker, topic: "fallguard/room-9/alert", try Self.bigFile(1_000_000), retain: false)
        try mosquittoPublish(broker, topic: "fallguard/room-9/state", "countdown", retain: true)
        #expect(await until(5) { topics.withLock { $0 }.contains("fallguard/room-9/state") })
        await station.stop()
        #expect(largest.withLock { $0 } <= MQTTLimits.stationPacket)
        #expect(broker.log.components(separatedBy: "Dropping too large outgoing PUBLISH for station-test").count - 1 >= 2)
    }

    /// A broker without MQTT 5 cannot be told the largest message: the bridge falls back to
    /// 3.1.1 and only publishes. The alert is delivered; nothing is subscribed.
    @Test func aBrokerWithoutMQTT5GetsAlertsButNoSubscription() async throws {
        let port = freeLoopbackPort()
        let log = temporaryFolder("mqtt311") + "/broker.log"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("FallGuardTestSupport/mqtt311-broker.py").path
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        broker.arguments = [script, "--port", String(port), "--log", log]
        broker.standardOutput = FileHandle.nullDevice
        try broker.run()
        // SIGKILL: children of the test process inherit a signal mask that blocks SIGTERM
        // (as MosquittoBroker.stop says), and waiting for a SIGTERM would hang the suite.
        defer { kill(broker.processIdentifier, SIGKILL); broker.waitUntilExit() }
        #expect(await until(5) { FileManager.default.fileExists(atPath: log) })
        let settings = MQTTChannelSettings(host: "127.0.0.1", port: port, device: "old", publishTimeout: 8,
                                           reconnectDelay: 1, reconnectDelayMax: 1)
        let mqtt = try MQTTChannel(settings: settings) { _, _ in }
        mqtt.start()
        let receipt = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-4")))
        #expect(receipt.providerID != nil)
        await mqtt.stop()
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        #expect(lines.first == "connect 5", "it asked for MQTT 5 first: \(lines)")
        #expect(lines.contains("connect 4"), "then 3.1.1: \(lines)")
        #expect(lines.contains { $0.hasPrefix("publish fallguard/old/alert ") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("subscribe") }, "nothing subscribed over 3.1.1: \(lines)")
    }

    /// MQTT 5's PUBACK says when the broker's rules refused an alert (135, not authorised):
    /// over 3.1.1 it was acknowledged as if delivered and dropped. Now the delivery fails,
    /// permanently (retrying cannot help until the rules change), and says why.
    @Test func anAlertTheBrokersRulesRefuseIsAFailureNotADelivery() async throws {
        let broker = try await MosquittoBroker(acl: "topic read fallguard/#\ntopic write fallguard/+/availability\ntopic write fallguard/+/state\n")
        let mqtt = try channel(broker, device: "denied")
        do {
            _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
            Issue.record("an alert the broker refused counted as delivered")
        } catch let failure as DeliveryFailure {
            guard case let .permanent(why) = failure else { Issue.record("expected permanent: \(failure)"); return }
            #expect(why.contains("Not authorized") && why.contains("135"), "\(why)")
        }
        await mqtt.stop()
    }
}
