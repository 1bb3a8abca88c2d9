import FallGuardCore
import FallGuardNotify
import Foundation
import Logging
import Synchronization

/// A staff station's connection to a site's broker: subscribes to `<prefix>/#` (again after
/// every reconnect) and hands every message on; publishes acknowledgements that only the
/// bridge concerned accepts (an HMAC over its device name, the incident and the time, keyed
/// with its `acknowledge-secret`: ``MQTTAcknowledgementGate``). Its own availability is
/// `<prefix>-station/<client id>/availability` (retained, its last will `offline`), unless it is
/// a station's second connection (`announces: false`): one station, one availability.
public final class MQTTSiteClient: Sendable {
    public let settings: MQTTChannelSettings
    public let clientID: String
    private let client: MosquittoClient
    private let availability: String
    /// Whether this connection publishes the station's availability (and leaves it as its will).
    private let announces: Bool
    private let link: LinkBox

    /// The station's own connection to the broker: whether it is up, since when, and why not.
    public struct Link: Sendable, Equatable {
        public var isConnected: Bool
        public var since: Date
        public var problem: String?
    }

    /// Connected or not, since when (the last change), and the last refusal, error or loss.
    public var connection: Link { link.mutex.withLock { $0 } }

    /// When the station last spoke to the broker while receiving (the network thread's alone).
    private final class Nudge: Sendable {
        private let last = Mutex(ContinuousClock.now)
        func due(every seconds: Double) -> Bool {
            last.withLock { t in
                guard ContinuousClock.now - t >= .seconds(seconds) else { return false }
                t = .now
                return true
            }
        }
    }

    /// Shared by the network thread's events and the page's readers.
    private final class LinkBox: Sendable {
        let mutex = Mutex(Link(isConnected: false, since: Date(), problem: "not connected yet"))
    }

    /// - Parameters:
    ///   - topics: what to subscribe to at each connection (nil: `<prefix>/#`, the whole site).
    ///   - announces: whether it publishes the station's availability; false for a station's
    ///     second connection (the residents'), so that a central view counts each station once.
    ///   - onMessage: topic, payload, and whether the broker sent it as retained; called on
    ///     libmosquitto's network thread: hand it on, do not block.
    public init(settings: MQTTChannelSettings, clientID: String, logger: Logger = Logger(label: "fallguard.station.mqtt"),
                topics: (@Sendable () -> [String])? = nil, announces: Bool = true,
                onMessage: @escaping @Sendable (String, [UInt8], Bool) -> Void) throws(MQTTError) {
        self.settings = settings
        self.clientID = clientID
        let availability = "\(settings.topicPrefix)-station/\(MQTTTopics.topicSafe(clientID))/availability"
        self.availability = availability
        self.announces = announces
        let prefix = settings.topicPrefix
        let link = LinkBox()
        self.link = link
        let nudge = Nudge()
        // A change of the link's state (its time is when it changed), or a new reason.
        let linked: @Sendable (Bool, String?) -> Void = { up, problem in
            link.mutex.withLock { l in
                if l.isConnected != up { l.since = Date() }
                l.isConnected = up
                l.problem = problem ?? (up ? nil : l.problem)
            }
        }
        let options = MosquittoOptions(
            host: settings.host, port: settings.effectivePort, clientID: clientID,
            keepalive: settings.keepalive, username: settings.username, password: settings.password,
            will: announces ? (availability, MQTTAvailability.offline) : nil,
            tls: settings.tls ? (settings.caFile, settings.certFile, settings.keyFile) : nil,
            reconnectDelay: settings.reconnectDelay, reconnectDelayMax: settings.reconnectDelayMax,
            maximumPacketSize: MQTTLimits.stationPacket)
        client = try MosquittoClient(options) { client, event in
            switch event {
            case let .connected(bounded):
                if bounded {
                    let wanted = topics?() ?? [prefix + "/#"]
                    logger.notice("station: connected to \(client.endpoint) as \(clientID), subscribed to \(wanted.count == 1 ? wanted[0] : "\(wanted.count) topics")")
                    linked(true, nil)
                    for t in wanted { client.subscribe(t) }
                } else {
                    let why = "\(client.endpoint) speaks only MQTT 3.1.1, which cannot bound the size of what it sends: the station reads nothing from it (use a broker with MQTT 5, e.g. mosquitto 1.6 or newer)"
                    logger.critical("station: \(why)")
                    linked(false, why)
                }
                if announces { client.publish(availability, Array(MQTTAvailability.online.utf8), retain: true) }
            case let .refused(reason, _):
                logger.error("station: the broker refused the connection: \(reason)")
                linked(false, reason)
            case let .disconnected(reason):
                logger.warning("station: disconnected from \(client.endpoint): \(reason)")
                linked(false, reason)
            case let .error(text):
                logger.warning("station: \(text)")
                linked(false, "\(client.endpoint): \(text)")
            case let .message(topic, payload, retained):
                onMessage(topic, payload, retained)
                // A broker that is sending is not hung. But libmosquitto's ping, sent after a
                // keepalive without a packet out, waits for its answer behind everything the
                // broker queued before it (60,000 retained messages of fake bridges: issue 40),
                // and the link is closed after a second keepalive, to fetch them all again.
                // While messages come, the station says it is online at most every half
                // keepalive, so that no ping goes out; when they stop, the keepalive rules.
                if announces, nudge.due(every: Double(settings.keepalive) / 2) {
                    _ = client.publish(availability, Array(MQTTAvailability.online.utf8), qos: 0, retain: true)
                }
            }
        }
    }

    public func start() { client.start() }

    /// Subscribes to `topics` now (a reload's new residents); the next connection subscribes to
    /// what `topics` then says.
    public func subscribe(_ topics: [String]) {
        guard link.mutex.withLock({ $0.isConnected }) else { return }
        for t in topics { client.subscribe(t) }
    }

    public func stop() async {
        if announces { _ = try? await client.publishAcknowledged(availability, Array(MQTTAvailability.offline.utf8), retain: true, timeout: 1) }
        client.stop()
    }

    /// The payload that acknowledges `incident` on bridge `device` as `by`, proven with `secret`
    /// at `time` (Unix seconds), the name inside the signed text: what the bridge's gate takes
    /// in `hmac` mode, and attributes to `by`.
    /// With `step`, a later step of the call (presence, reset) instead: signed over the step
    /// (``MQTTAcknowledgementGate/signedText(device:incident:time:by:step:)``), never an
    /// acknowledgement.
    public static func acknowledgement(device: String, incident: String, by: String, secret: String, time: Int64,
                                       step: CallStep? = nil) -> [UInt8] {
        let mac = MQTTAcknowledgementGate.hmac(secret: secret, device: device, incident: incident, time: time, by: by, step: step)
        struct Ack: Encodable { var incident: String; var by: String; var step: String?; var time: Int64; var hmac: String }
        return (try? Array(JSONEncoder().encode(Ack(incident: incident, by: by, step: step?.rawValue, time: time, hmac: mac)))) ?? []
    }

    /// Publishes that acknowledgement (or step) on `<prefix>/<device>/ack` at QoS 1 and returns
    /// after the broker's PUBACK (within `publish-timeout`).
    public func acknowledge(device: String, incident: String, by: String, secret: String, step: CallStep? = nil,
                            now: Date = Date()) async throws {
        let topic = MQTTTopics(prefix: settings.topicPrefix, device: device).acknowledge
        let payload = Self.acknowledgement(device: device, incident: incident, by: by, secret: secret,
                                           time: Int64(now.timeIntervalSince1970.rounded()), step: step)
        _ = try await client.publishAcknowledged(topic, payload, timeout: settings.publishTimeout)
    }
}
