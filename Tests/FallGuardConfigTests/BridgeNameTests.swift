import FallGuardConfig
import FallGuardCore
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Testing
import FallGuardTestSupport

/// Issue 30: the top-level `device:` is "this bridge's name in messages, payloads and MQTT
/// topics", and the MQTT channel now takes it. Before, ten bridges `device: room-1` … `room-10`
/// on one machine all published as `fallguard/<hostname>-<hash>/…` and took each other off
/// the broker. The channel's own `device` is a deprecated alias that must agree.
@Suite struct BridgeNameTests {
    static func configuration(device: String?, channel: String = "", port: Int = 1883) -> String {
        (device.map { "device: \($0)\n" } ?? "") + """
            wearer: {name: Margaret}
            channels:
              mq: {type: mqtt, host: 127.0.0.1, port: \(port), acknowledge-secret: 0123456789abcdef-care\(channel)}
            policy:
              fall: &mq {primary: [], others: [], broadcast: [mq]}
              help-requested: *mq
              resolved: *mq
              device-problem: *mq
              heartbeat: *mq
            """
    }

    static func load(_ yaml: String) -> (MQTTChannelSettings?, [ConfigDiagnostic]) {
        let (configuration, diagnostics) = DaemonConfiguration.load(yaml: yaml, path: "config.yaml")
        return (configuration.notify.effective.channels["mq"] as? MQTTChannelSettings, diagnostics)
    }

    @Test func theTopLevelDeviceNamesTheBridgeOnMQTT() throws {
        let (settings, diagnostics) = Self.load(Self.configuration(device: "room-12"))
        #expect(!diagnostics.contains { $0.isError }, "\(diagnostics)")
        let s = try #require(settings)
        #expect(s.effectiveDevice == "room-12" && s.effectiveClientID == "fallguard-room-12")
        #expect(MQTTTopics(s).alert == "fallguard/room-12/alert" && MQTTTopics(s).nodeID == "fallguard_room-12")
        #expect(!diagnostics.contains { $0.problem.key.hasPrefix("channels.mq") && $0.problem.message.contains("device") }, "\(diagnostics)")
    }

    @Test func aNameThatIsNotOneTopicLevelIsShownAsTheIdItBecomes() throws {
        let (settings, diagnostics) = Self.load(Self.configuration(device: "\"Room 12\""))
        #expect(try #require(settings).effectiveDevice == "room-12")
        #expect(diagnostics.contains { !$0.isError && $0.description.hasPrefix("config.yaml:4: warning: channels.mq: this bridge's name 'Room 12'") },
                "\(diagnostics.map(\.description))")
    }

    @Test func theChannelsOwnDeviceMustAgreeAndIsDeprecated() throws {
        let differing = Self.load(Self.configuration(device: "room-12", channel: ", device: kitchen")).1
        let error = try #require(differing.first { $0.isError }, "\(differing)")
        #expect(error.description.hasPrefix("config.yaml:4: channels.mq.device: 'kitchen' differs from this bridge's name, the top-level device: 'room-12'"),
                "\(error.description)")
        #expect(error.description.contains("remove this key"))

        let agreeing = Self.load(Self.configuration(device: "room-12", channel: ", device: room-12"))
        #expect(!agreeing.1.contains { $0.isError } && agreeing.0?.effectiveDevice == "room-12")
        #expect(agreeing.1.contains { $0.problem.key == "channels.mq.device" && $0.problem.message.hasPrefix("deprecated") })

        // A file from before (the name only on the channel) still works, and is told where the name goes.
        let before = Self.load(Self.configuration(device: nil, channel: ", device: kitchen"))
        #expect(!before.1.contains { $0.isError } && before.0?.effectiveDevice == "kitchen")
        #expect(before.1.contains { $0.problem.key == "channels.mq.device" && $0.problem.message.contains("set the top-level device: kitchen") })
    }

    @Test func theExamplesNameOrNoneIsWarnedWithAnMQTTChannel() {
        let example = Self.load(Self.configuration(device: "fallguard")).1
        #expect(example.contains { !$0.isError && $0.problem.key == "channels.mq" && $0.problem.message.contains("shares the same topics") },
                "\(example.map(\.description))")
        let none = Self.load(Self.configuration(device: nil)).1
        #expect(none.contains { !$0.isError && $0.problem.key == "channels.mq" && $0.problem.message.contains("no top-level device") },
                "\(none.map(\.description))")
    }

    /// Two bridges on one real broker, named only by the top-level key: each publishes under its
    /// own name, with its own client id, and neither takes the other off the broker.
    @Test(.enabled(if: mosquittoMissing == nil, "\(mosquittoMissing ?? "")"))
    func twoBridgesWithTheirOwnDevicePublishUnderTheirOwnNames() async throws {
        let broker = try await MosquittoBroker()
        var bridges: [MQTTChannel] = []
        for room in ["room-1", "room-2"] {
            let settings = try #require(Self.load(Self.configuration(device: room, port: broker.port)).0)
            let bridge = try MQTTChannel(name: "mq", settings: settings, onAcknowledgement: { _, _ in })
            bridge.start()
            bridges.append(bridge)
        }
        let subscriber = try await Subscriber(broker, topics: ["fallguard/+/alert", "fallguard/+/availability"], count: 4, timeout: 10)
        for (i, bridge) in bridges.enumerated() {
            let payload = AlertPayload(idempotencyKey: "k\(i + 1)", test: false, device: "room-\(i + 1)", wearer: Wearer(name: "Margaret"),
                                       alert: Alert(kind: .fall, incident: "FG-1", time: 1),
                                       message: RenderedMessage(subject: "Fall", body: "Margaret may have fallen."), sentAt: "2026-11-26T10:00:00Z")
            _ = try await bridge.send(Delivery(channel: "mq", recipient: nil, payload: payload))
        }
        let lines = await subscriber.lines()
        for bridge in bridges { await bridge.stop() }
        #expect(lines.contains("fallguard/room-1/availability 1 1 online") && lines.contains("fallguard/room-2/availability 1 1 online"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("fallguard/room-1/alert 1 0 ") && $0.contains(#""idempotencyKey":"k1""#) }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("fallguard/room-2/alert 1 0 ") && $0.contains(#""idempotencyKey":"k2""#) }, "\(lines)")
        #expect(broker.log.contains("as fallguard-room-1") && broker.log.contains("as fallguard-room-2"))
        #expect(!broker.log.contains("already connected"), "no bridge took the other's client id")
    }
}
