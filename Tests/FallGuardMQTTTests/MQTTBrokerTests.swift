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

func samplePayload(incident: String = "FG-7", key: String = UUID().uuidString) -> AlertPayload {
    AlertPayload(idempotencyKey: key, test: false, device: "bedroom",
                 wearer: Wearer(name: "Margaret", location: "Flat 3, 12 Mill Lane"),
                 alert: Alert(kind: .fall, incident: incident, time: 42.5),
                 message: RenderedMessage(subject: "Fall: Margaret", body: "Margaret may have fallen."),
                 sentAt: "2026-11-22T10:00:00+00:00")
}

func channel(_ broker: MosquittoBroker, device: String, timeout: Double = 5,
             username: String? = nil, password: String? = nil, tls: Bool = false, caFile: String? = nil,
             clientCertificate: (cert: String, key: String)? = nil,
             onAcknowledgement: @escaping AcknowledgementHandler = { _, _ in }) throws -> MQTTChannel {
    let settings = MQTTChannelSettings(host: "127.0.0.1", port: broker.port, username: username, password: password,
                                       device: device, publishTimeout: timeout, reconnectDelay: 1, reconnectDelayMax: 1,
                                       tls: tls, caFile: caFile, certFile: clientCertificate?.cert, keyFile: clientCertificate?.key)
    let c = try MQTTChannel(settings: settings, onAcknowledgement: onAcknowledgement)
    c.start()
    return c
}

/// The `fallguard-mqtt-probe` binary built beside the tests.
let probeBinary = builtBinary("fallguard-mqtt-probe")

@Suite(.enabled(if: mosquittoMissing == nil, "\(mosquittoMissing ?? "")"))
struct MQTTBrokerTests {
    @Test func alertArrivesAtQoS1WithItsIdempotencyKeyAfterPUBACK() async throws {
        let broker = try await MosquittoBroker()
        let mqtt = try channel(broker, device: "bedroom")
        let subscriber = try await Subscriber(broker, topics: [mqtt.topics.alert], count: 1)
        let payload = samplePayload()

        let receipt = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: payload))
        await mqtt.stop()

        let lines = await subscriber.lines()
        let line = try #require(lines.first)
        #expect(line.hasPrefix("fallguard/bedroom/alert 1 0 {"), "topic, QoS 1, not retained: \(line)")
        let json = try #require(line.split(separator: " ", maxSplits: 3).last)
        let received = try JSONDecoder().decode(AlertPayload.self, from: Data(json.utf8))
        #expect(received == payload)
        let mid = try #require(receipt.providerID)
        #expect(broker.log.contains("Sending PUBACK to \(mqtt.settings.effectiveClientID) (m\(mid), rc0)"))
    }

    @Test func concurrentAlertsEachWaitForTheirOwnPUBACK() async throws {
        let broker = try await MosquittoBroker()
        let mqtt = try channel(broker, device: "ward-7", timeout: 10)
        let count = 300
        let subscriber = try await Subscriber(broker, topics: [mqtt.topics.alert], count: count, timeout: 10)
        let receipts = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<count {
                group.addTask {
                    try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(key: "k\(i)"))).providerID ?? ""
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let lines = await subscriber.lines()
        await mqtt.stop()
        #expect(Set(receipts).count == count, "one message id per alert")
        let keys = Set(lines.compactMap { $0.firstMatch(of: /"idempotencyKey":"(k\d+)"/)?.1 }.map(String.init))
        #expect(keys == Set((0..<count).map { "k\($0)" }))
    }

    @Test func discoveryConfigsAvailabilityAndStateAreRetained() async throws {
        let broker = try await MosquittoBroker()
        let mqtt = try channel(broker, device: "flat-3")
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-2")))
        mqtt.publish(state: .alertOut)
        mqtt.publish(lastIncident: Alert(kind: .fall, incident: "FG-2", time: 1), at: Date(timeIntervalSince1970: 0))
        // Published after the state on the same connection: the broker has stored the state.
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-2")))

        let subscriber = try await Subscriber(broker, topics: ["homeassistant/+/fallguard_flat-3/+/config", "fallguard/flat-3/availability",
                                                         "fallguard/flat-3/state", "fallguard/flat-3/incident",
                                                         "fallguard/flat-3/worn"], count: 9)
        let lines = await subscriber.lines()
        await mqtt.stop()

        #expect(lines.count == 9)
        #expect(lines.contains("fallguard/flat-3/worn 1 1 worn"))
        #expect(lines.allSatisfy { $0.split(separator: " ")[2] == "1" }, "all retained: \(lines)")
        #expect(lines.contains("fallguard/flat-3/availability 1 1 online"))
        #expect(lines.contains("fallguard/flat-3/state 1 1 alert-out"))
        let incident = try #require(lines.first { $0.hasPrefix("fallguard/flat-3/incident") })
        // The bytes a station reads (``LastIncidentReport``): keys sorted, in kebab case, nothing unset.
        #expect(incident == #"fallguard/flat-3/incident 1 1 {"at":"1970-01-01T00:00:00Z","incident":"FG-2","kind":"fall","severity":"alarm"}"#)
        var uniqueIDs: Set<String> = [], entityIDs: Set<String> = []
        for line in lines where line.hasPrefix("homeassistant/") {
            let parts = line.split(separator: " ", maxSplits: 3)
            let config = try #require(try JSONSerialization.jsonObject(with: Data(parts[3].utf8)) as? [String: Any])
            uniqueIDs.insert(try #require(config["unique_id"] as? String))
            entityIDs.insert(try #require(config["default_entity_id"] as? String))
            #expect(config["object_id"] == nil, "object_id is deprecated since Home Assistant 2025.10")
            #expect(config["availability_topic"] as? String == "fallguard/flat-3/availability")
            let device = try #require(config["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["fallguard_flat-3"])
        }
        #expect(uniqueIDs == ["fallguard_flat-3_fall", "fallguard_flat-3_not_worn", "fallguard_flat-3_state", "fallguard_flat-3_last_incident",
                              "fallguard_flat-3_acknowledge"])
        #expect(entityIDs == ["binary_sensor.fallguard_flat_3_fall", "binary_sensor.fallguard_flat_3_not_worn", "sensor.fallguard_flat_3_state",
                              "sensor.fallguard_flat_3_last_incident", "button.fallguard_flat_3_acknowledge"])
    }

    /// Issue 36: a bridge with a power supply publishes it retained and discovers Home
    /// Assistant's "Battery" and "Mains"; one without claims neither (the test above).
    @Test func powerIsRetainedWithItsBatteryAndMainsEntities() async throws {
        let broker = try await MosquittoBroker()
        let mqtt = try channel(broker, device: "den")
        mqtt.publish(power: PowerReading(batteries: [.init(name: "test_battery", capacity: 15, status: "Discharging")],
                                         supplies: [.init(name: "test_ac", type: "Mains", online: false)]))
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-2")))
        let subscriber = try await Subscriber(broker, topics: ["homeassistant/+/fallguard_den/battery/config",
                                                         "homeassistant/+/fallguard_den/mains/config", "fallguard/den/power"], count: 3)
        let lines = await subscriber.lines()
        await mqtt.stop()
        #expect(lines.contains(#"fallguard/den/power 1 1 {"battery":15,"battery-status":"Discharging","mains":"offline"}"#), "\(lines)")
        let battery = try #require(lines.first { $0.hasPrefix("homeassistant/sensor/fallguard_den/battery/config") })
        let config = try #require(try JSONSerialization.jsonObject(with: Data(battery.split(separator: " ", maxSplits: 3)[3].utf8)) as? [String: Any])
        #expect(config["device_class"] as? String == "battery" && config["unit_of_measurement"] as? String == "%")
        #expect(config["state_topic"] as? String == "fallguard/den/power" && config["value_template"] as? String == "{{ value_json.battery }}")
        #expect(lines.contains { $0.hasPrefix("homeassistant/binary_sensor/fallguard_den/mains/config") && $0.contains(#""device_class":"power""#) })
    }

    @Test func brokerPublishesTheLastWillWhenTheBridgeIsKilled() async throws {
        let broker = try await MosquittoBroker()
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: probeBinary)
        probe.arguments = ["--host", "127.0.0.1", "--port", String(broker.port), "--device", "hall"]
        probe.standardInput = Pipe()  // open: the probe runs until killed
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        try probe.run()
        #expect(await broker.waitForConnection(of: "fallguard-hall"))
        // Subscribe only once the broker holds `online` (mosquitto handles one packet at a time, so a
        // SUBSCRIBE read after this line sees it retained); subscribing on CONNECT alone raced it.
        #expect(await broker.waitForLog(timeout: 10) {
            $0.split(separator: "\n").contains {
                $0.contains("Received PUBLISH from fallguard-hall") && $0.contains("'fallguard/hall/availability'")
            }
        })
        // Retained `online`, then the will.
        let subscriber = try await Subscriber(broker, topics: ["fallguard/hall/availability"], count: 2)
        kill(probe.processIdentifier, SIGKILL)
        probe.waitUntilExit()

        let lines = await subscriber.lines()
        #expect(probe.terminationReason == .uncaughtSignal)
        #expect(lines == ["fallguard/hall/availability 1 1 online", "fallguard/hall/availability 1 0 offline"])
        // …and it stays retained for whoever subscribes later.
        let later = try await Subscriber(broker, topics: ["fallguard/hall/availability"], count: 1)
        #expect(await later.lines() == ["fallguard/hall/availability 1 1 offline"])
    }

    @Test func cleanStopLeavesOfflineRetainedWithoutTheWill() async throws {
        let broker = try await MosquittoBroker()
        let mqtt = try channel(broker, device: "study")
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
        await mqtt.stop()
        #expect(await broker.waitForLog(timeout: 5) { $0.contains("Received DISCONNECT from fallguard-study") })
        let subscriber = try await Subscriber(broker, topics: ["fallguard/study/availability"], count: 1)
        #expect(await subscriber.lines() == ["fallguard/study/availability 1 1 offline"])
    }

    @Test func acknowledgementsThatNameTheirIncidentReachTheHandler() async throws {
        let broker = try await MosquittoBroker()
        let received = Mutex<[String]>([])
        let mqtt = try channel(broker, device: "lounge") { incident, by in
            received.withLock { $0.append("\(incident) by \(by)") }
        }
        // The alert goes out after the subscription to the ack topic (same connection, in order).
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-7")))

        try mosquittoPublish(broker, topic: "fallguard/lounge/ack", #"{"incident": "FG-7", "by": "Anna"}"#)
        try mosquittoPublish(broker, topic: "fallguard/lounge/ack", "FG-8")
        try mosquittoPublish(broker, topic: "fallguard/lounge/ack", "not json {")
        // No incident named: it used to acknowledge whatever alert was out, a new fall included.
        try mosquittoPublish(broker, topic: "fallguard/lounge/ack", #"{"by":"Home Assistant"}"#)
        try mosquittoPublish(broker, topic: "fallguard/other/ack", "FG-9")
        try mosquittoPublish(broker, topic: "fallguard/lounge/ack", "FG-10")
        #expect(await until(5) { received.withLock { $0.count } >= 3 })
        try await Task.sleep(for: .milliseconds(300))
        await mqtt.stop()
        #expect(received.withLock { $0 } == ["FG-7 by Anna", "FG-8 by ", "FG-10 by "])
    }

    /// A retained ack fired again at every reconnect: it is ignored, and cleared from the broker.
    @Test func aRetainedAcknowledgementIsIgnoredAndCleared() async throws {
        let broker = try await MosquittoBroker()
        try mosquittoPublish(broker, topic: "fallguard/hall/ack", #"{"incident": "FG-1", "by": "Anna"}"#, retain: true)
        let received = Mutex<[String]>([])
        let mqtt = try channel(broker, device: "hall") { incident, _ in received.withLock { $0.append(incident) } }
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-1")))
        try mosquittoPublish(broker, topic: "fallguard/hall/ack", "FG-2")
        #expect(await until(5) { !received.withLock { $0 }.isEmpty })
        await mqtt.stop()
        #expect(received.withLock { $0 } == ["FG-2"], "only the live one")
        // Nothing retained is left on the ack topic: a new subscriber's first message is the
        // marker published after it subscribed (retained ones come at once on subscribing).
        let first = try await Subscriber(broker, topics: ["fallguard/hall/ack", "test/marker"], count: 1)
        try mosquittoPublish(broker, topic: "test/marker", "end")
        #expect(await first.lines() == ["test/marker 1 0 end"])
    }

    /// Issue 28 item 9: a token ack published retained while the bridge is connected arrives
    /// without the retain flag; it is acted on, and its copy is cleared from the broker (it
    /// used to stay there for every later subscriber to read and replay).
    @Test func anAcknowledgementPublishedRetainedWhileConnectedIsClearedFromTheBroker() async throws {
        let broker = try await MosquittoBroker()
        let secret = "0123456789abcdef-porch"
        var settings = MQTTChannelSettings(host: "127.0.0.1", port: broker.port, device: "porch", publishTimeout: 5,
                                           reconnectDelay: 1, reconnectDelayMax: 1, acknowledgeSecret: secret)
        settings.acknowledgeMode = .token
        let received = Mutex<[String]>([])
        let mqtt = try MQTTChannel(settings: settings) { incident, _ in received.withLock { $0.append(incident) } }
        mqtt.start()
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-4")))
        try mosquittoPublish(broker, topic: "fallguard/porch/ack", #"{"incident": "FG-4", "token": "\#(secret)"}"#, retain: true)
        #expect(await until(5) { received.withLock { $0 } == ["FG-4"] }, "acted on")
        try await Task.sleep(for: .milliseconds(300))
        await mqtt.stop()
        let first = try await Subscriber(broker, topics: ["fallguard/porch/ack", "test/marker"], count: 1)
        try mosquittoPublish(broker, topic: "test/marker", "end")
        #expect(await first.lines() == ["test/marker 1 0 end"], "no copy of the token left on the broker")
    }

    /// Several bridges on one broker: each has its own topics, client id and secret, and an ack
    /// for one (even for an incident id the other also has) never reaches the other.
    @Test func bridgesOnOneBrokerNeverTakeEachOthersAcknowledgements() async throws {
        let broker = try await MosquittoBroker()
        let rooms = ["kitchen", "bedroom", "hall"]
        let received = Mutex<[String: [String]]>([:])
        var bridges: [MQTTChannel] = []
        for room in rooms {
            var settings = MQTTChannelSettings(host: "127.0.0.1", port: broker.port, device: room, publishTimeout: 5,
                                               reconnectDelay: 1, reconnectDelayMax: 1, acknowledgeSecret: "secret-of-the-\(room)")
            if room == "hall" { settings.acknowledgeMode = .token }   // a loopback broker: tokens allowed
            let bridge = try MQTTChannel(settings: settings) { incident, by in
                received.withLock { $0[room, default: []].append("\(incident) by \(by)") }
            }
            bridge.start()
            bridges.append(bridge)
            _ = try await bridge.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(incident: "FG-1")))
        }
        #expect(Set(bridges.map(\.settings.effectiveClientID)).count == 3)
        let now = Int64(Date().timeIntervalSince1970)
        func ack(_ room: String, secretOf owner: String, by: String = "Anna") -> String {
            let mac = MQTTAcknowledgementGate.hmac(secret: "secret-of-the-\(owner)", device: room, incident: "FG-1", time: now)
            return #"{"incident": "FG-1", "by": "\#(by)", "time": \#(now), "hmac": "\#(mac)"}"#
        }
        try mosquittoPublish(broker, topic: "fallguard/bedroom/ack", ack("bedroom", secretOf: "kitchen"))   // wrong secret
        try mosquittoPublish(broker, topic: "fallguard/bedroom/ack", ack("kitchen", secretOf: "kitchen"))   // kitchen's, replayed
        try mosquittoPublish(broker, topic: "fallguard/bedroom/ack", #"{"incident": "FG-1", "token": "secret-of-the-hall"}"#)
        try mosquittoPublish(broker, topic: "fallguard/bedroom/ack", "FG-1")                                // no proof
        try mosquittoPublish(broker, topic: "fallguard/kitchen/ack", ack("kitchen", secretOf: "kitchen", by: "Kitchen Bob"))
        try mosquittoPublish(broker, topic: "fallguard/hall/ack", #"{"incident": "FG-1", "token": "secret-of-the-hall"}"#)
        #expect(await until(5) { received.withLock { $0.count } >= 2 })
        try await Task.sleep(for: .milliseconds(300))
        for bridge in bridges { await bridge.stop() }
        #expect(received.withLock { $0 } == ["kitchen": ["FG-1 by Kitchen Bob"], "hall": ["FG-1 by "]])
        #expect(!broker.log.contains("already connected"), "no client id was taken over")
    }

    /// Refused credentials (CONNACK 4/5) are what a broker answers while its password file or
    /// auth plugin reloads: transient, retried, and the reason is in the failure.
    @Test func refusedCredentialsAreTransientAndRightOnesDeliver() async throws {
        let broker = try await MosquittoBroker(users: ["bridge": "s3cret"])
        let wrong = try channel(broker, device: "wrong", username: "bridge", password: "guess")
        await #expect(throws: DeliveryFailure.self) {
            _ = try await wrong.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
        }
        do {
            _ = try await wrong.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
            Issue.record("delivered with a wrong password")
        } catch let failure as DeliveryFailure {
            guard case .transient(let why) = failure else { Issue.record("expected transient, got \(failure)"); return }
            let text = why.lowercased()
            #expect(text.contains("not author") || text.contains("user name or password") || text.contains("username or password"), "\(why)")
        }
        await wrong.stop()

        let right = try channel(broker, device: "right", username: "bridge", password: "s3cret")
        let receipt = try await right.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
        #expect(receipt.providerID != nil)
        await right.stop()
    }

    /// A Pi that boots before its broker: libmosquitto's own thread never retried a first
    /// connection that failed (measured: the alert retried for 40 s against a broker that had
    /// been up for 20 of them), so the bridge retries it until one starts.
    @Test func aBrokerThatComesUpAfterTheBridgeStartedIsReached() async throws {
        let broker = try await MosquittoBroker()
        broker.stop()
        let mqtt = try channel(broker, device: "late", timeout: 2)
        await #expect(throws: DeliveryFailure.self) {
            _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
        }
        try await broker.start()
        #expect(await broker.waitForConnection(of: "fallguard-late", times: 1, timeout: 10), "connected once the broker was up")
        let receipt = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(key: "late")))
        #expect(receipt.providerID != nil)
        await mqtt.stop()
    }

    @Test func brokerDownIsTransientAndTheNextAttemptDeliversWhenItIsBack() async throws {
        let broker = try await MosquittoBroker()
        let mqtt = try channel(broker, device: "porch", timeout: 3)
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))

        broker.stop()
        let whileDown = samplePayload(key: "while-down")
        do {
            _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: whileDown))
            Issue.record("delivered with the broker down")
        } catch let failure as DeliveryFailure {
            guard case .transient = failure else { Issue.record("expected transient, got \(failure)"); return }
        }

        try await broker.start()
        #expect(await broker.waitForConnection(of: "fallguard-porch", times: 1, timeout: 10), "reconnected after the restart")
        // libmosquitto may also send the message that timed out while the broker was down once it
        // reconnects (QoS 1 keeps it in flight); a receiver drops it by its idempotency key. The
        // subscriber takes the first two messages; a second new one makes sure there are two.
        let subscriber = try await Subscriber(broker, topics: ["fallguard/porch/alert"], count: 2)
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(key: "after-restart")))
        _ = try await mqtt.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload(key: "marker")))
        let lines = await subscriber.lines()
        await mqtt.stop()
        let keys = lines.compactMap { $0.firstMatch(of: /"idempotencyKey":"([^"]+)"/).map { String($0.1) } }
        #expect(keys.count == 2, "\(lines)")
        #expect(keys.first { $0 != "while-down" } == "after-restart", "the new message, first after any resend: \(keys)")
        #expect(keys.allSatisfy { ["while-down", "after-restart", "marker"].contains($0) }, "\(keys)")
    }

    @Test func tlsToABrokerWhoseCertificateWeTrustDeliversAndToAnUntrustedOneDoesNot() async throws {
        let broker = try await MosquittoBroker(tls: brokerCertificate)
        let trusted = try channel(broker, device: "tls-ok", tls: true, caFile: brokerCertificate.cert)
        let receipt = try await trusted.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
        await trusted.stop()
        // MQTT 5: rc16, "no matching subscribers", is a success too.
        #expect(broker.log.contains("Sending PUBACK to fallguard-tls-ok (m\(receipt.providerID ?? "?"), rc0)")
                || broker.log.contains("Sending PUBACK to fallguard-tls-ok (m\(receipt.providerID ?? "?"), rc16)"))

        // The system's CAs do not know the self-signed certificate: no connection, no alert.
        let untrusted = try channel(broker, device: "tls-bad", timeout: 1, tls: true)
        do {
            _ = try await untrusted.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
            Issue.record("delivered to a broker whose certificate nobody trusts")
        } catch let failure as DeliveryFailure {
            #expect(failure.description.contains("certificate verify failed"), "\(failure)")
        }
        await untrusted.stop()
        #expect(!broker.log.contains("Received PUBLISH from fallguard-tls-bad"))
    }

    @Test func brokerThatRequiresAClientCertificateAcceptsOurs() async throws {
        let broker = try await MosquittoBroker(tls: brokerCertificate, requireClientCertificate: true)
        let withCertificate = try channel(broker, device: "cert-ok", tls: true, caFile: brokerCertificate.cert,
                                          clientCertificate: clientCertificate)
        _ = try await withCertificate.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
        await withCertificate.stop()

        let without = try channel(broker, device: "cert-none", timeout: 1, tls: true, caFile: brokerCertificate.cert)
        await #expect(throws: DeliveryFailure.self) {
            _ = try await without.send(Delivery(channel: "mqtt", recipient: nil, payload: samplePayload()))
        }
        await without.stop()
        #expect(broker.log.contains("Received PUBLISH from fallguard-cert-ok"))
        #expect(!broker.log.contains("Received PUBLISH from fallguard-cert-none"))
    }

    @Test func stopReturnsWhileTheBrokerIsUnreachable() async throws {
        let settings = MQTTChannelSettings(host: "127.0.0.1", port: freeLoopbackPort(), device: "nobody",
                                           publishTimeout: 0.5, reconnectDelay: 30, reconnectDelayMax: 30)
        let mqtt = try MQTTChannel(settings: settings, onAcknowledgement: { _, _ in })
        mqtt.start()
        try await Task.sleep(for: .milliseconds(1500))  // first attempt failed; sleeping 30 s before the next
        let stopped = Mutex(false)
        let watchdog = Task {
            try await Task.sleep(for: .seconds(10))
            #expect(stopped.withLock { $0 }, "stop() still blocked after 10 s")
        }
        await mqtt.stop()
        stopped.withLock { $0 = true }
        watchdog.cancel()
    }
}
