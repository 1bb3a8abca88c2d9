import FallGuardCore
import FallGuardNotify
import Foundation
import Logging
import Synchronization

/// The MQTT channel of one bridge: alerts at QoS 1 on `<prefix>/<device>/alert`, a retained
/// availability with a last will, retained state and last incident, Home Assistant discovery,
/// and acknowledgements from `<prefix>/<device>/ack` handed to the alert engine.
///
/// Call ``start()`` once; ``stop()`` on shutdown publishes `offline` and disconnects.
/// ``send(_:)`` returns after the broker's PUBACK; it never retries (the outbox does).
public final class MQTTChannel: NotificationChannel {
    public let name: String
    public let settings: MQTTChannelSettings
    public let topics: MQTTTopics
    private let client: MosquittoClient
    private let retained: BridgeSession

    /// - Parameter onAcknowledgement: called on libmosquitto's network thread for each valid
    ///   acknowledgement; hand it on, do not block.
    /// - Parameter onProvenAcknowledgement: for acknowledgements that proved the secret with an
    ///   HMAC (a staff station); nil: `onAcknowledgement` takes them too.
    /// - Parameter onCallStep: for a station's later steps of a call it accepted (presence,
    ///   reset), proven with an HMAC over the step; nil: they are refused.
    public init(name: String = "mqtt", settings: MQTTChannelSettings,
                onAcknowledgement: @escaping AcknowledgementHandler,
                onProvenAcknowledgement: AcknowledgementHandler? = nil,
                onCallStep: CallStepHandler? = nil,
                clockSynchronized: @escaping @Sendable () -> Bool? = { nil },
                logger: Logger = Logger(label: "fallguard.mqtt")) throws(MQTTError) {
        self.name = name
        self.settings = settings
        let topics = MQTTTopics(settings)
        self.topics = topics
        let retained = BridgeSession(topics: topics, discovery: settings.discovery,
                                     gate: MQTTAcknowledgementGate(device: topics.device, secret: settings.acknowledgeSecret,
                                                                   acceptsToken: settings.acknowledgeMode == .token,
                                                                   clockSynchronized: clockSynchronized),
                                     onAcknowledgement: onAcknowledgement,
                                     onProvenAcknowledgement: onProvenAcknowledgement ?? onAcknowledgement,
                                     onCallStep: onCallStep, logger: logger)
        self.retained = retained
        let options = MosquittoOptions(
            host: settings.host, port: settings.effectivePort, clientID: settings.effectiveClientID,
            keepalive: settings.keepalive, username: settings.username, password: settings.password,
            will: (topics.availability, MQTTAvailability.offline),
            tls: settings.tls ? (settings.caFile, settings.certFile, settings.keyFile) : nil,
            reconnectDelay: settings.reconnectDelay, reconnectDelayMax: settings.reconnectDelayMax,
            maximumPacketSize: MQTTLimits.bridgePacket)
        client = try MosquittoClient(options) { client, event in retained.handle(event, client) }
    }

    /// Starts connecting in the background; reconnects by itself until ``stop()``.
    public func start() {
        retained.logger.info("MQTT: connecting", metadata: ["broker": "\(client.endpoint)", "topics": "\(topics.base)/#"])
        client.start()
    }

    /// Publishes `offline` (waiting up to a second for the broker) and disconnects.
    public func stop() async {
        _ = try? await client.publishAcknowledged(topics.availability, Array(MQTTAvailability.offline.utf8),
                                                  retain: true, timeout: 1)
        client.stop()
    }

    /// Publishes the alert's JSON at QoS 1 and returns after the broker's PUBACK, with the
    /// message id as provider id. Throws ``DeliveryFailure/transient(_:)`` when the broker is
    /// unreachable or slow (within ``MQTTChannelSettings/publishTimeout``), ``DeliveryFailure/permanent(_:)`` when it
    /// refused our credentials.
    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        let payload: [UInt8]
        do {
            payload = [UInt8](try MQTTChannel.encoder.encode(delivery.payload))
        } catch {
            throw DeliveryFailure.permanent("cannot encode the alert as JSON: \(error)")
        }
        let mid = try await client.publishAcknowledged(topics.alert, payload, timeout: settings.publishTimeout)
        return DeliveryReceipt(providerID: String(mid),
                               detail: "PUBACK from \(client.endpoint) for \(topics.alert)")
    }

    /// Reports the device's state on the retained state topic (and again after every
    /// reconnect). Report `alert-out` while an alert is out, also when the sensor is faulty:
    /// Home Assistant's "Fall" sensor is on exactly then.
    public func publish(state: AlarmStatus) {
        retained.set(state: state, client)
    }

    /// Reports whether the device is worn on the retained worn topic (and again after every
    /// reconnect); only a change is published.
    public func publish(worn: Bool) {
        retained.set(worn: worn, client)
    }

    /// Reports the battery and the mains on the retained power topic (``MQTTPower``); the
    /// first report also discovers Home Assistant's "Battery" and "Mains" entities, so a bridge
    /// without a power supply claims none.
    public func publish(power: PowerReading) {
        retained.set(power: MQTTPower(power), client)
    }

    /// Reports the cellular modem on the retained modem topic (``MQTTModem``), sent again
    /// after a reconnect.
    public func publish(modem: MQTTModem) {
        retained.set(modem: modem, client)
    }

    /// Reports the last incident on its retained topic (Home Assistant's button sends its id).
    public func publish(lastIncident: Alert, at time: Date) {
        let info = LastIncidentReport(incident: lastIncident.incident, kind: lastIncident.kind.rawValue,
                                    severity: lastIncident.severity.rawValue,
                                    at: iso8601(secondsSince1970: time.timeIntervalSince1970), acknowledgedBy: lastIncident.acknowledgedBy)
        retained.set(lastIncident: info, client)
    }

    /// What became of the alarm `incident` (a message went out, who answered the call), on the
    /// retained last-incident topic, when it is still the last incident.
    public func publish(progressOf incident: String, delivered: Bool, reachedBy: String?) {
        retained.update(incident, client) { last in
            last.delivered = delivered
            last.reachedBy = reachedBy ?? last.reachedBy
        }
    }

    /// Presence at the bedside on an accepted alarm (a long press after a station's
    /// acknowledgement): `present-by` and `present-at` on the retained last incident, when it is
    /// still the last one, so that the station records the call's step.
    public func publish(presenceOf incident: String, by: String, at: String) {
        retained.update(incident, client) { last in
            (last.presentBy, last.presentAt) = (by, at)
        }
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()
}

/// What the bridge publishes again after every reconnect, and what it does with messages.
private final class BridgeSession: Sendable {
    let topics: MQTTTopics
    let discovery: Bool
    let gate: MQTTAcknowledgementGate
    let onAcknowledgement: AcknowledgementHandler
    let onProvenAcknowledgement: AcknowledgementHandler
    let onCallStep: CallStepHandler?
    let logger: Logger
    private let current = Mutex<(state: AlarmStatus?, incident: LastIncidentReport?, worn: Bool)>((nil, nil, true))
    /// The last power report; nil while the bridge has none (no entity discovered).
    private let power = Mutex<MQTTPower?>(nil)
    private let modem = Mutex<MQTTModem?>(nil)
    private let refusals = Mutex(RefusalLog())

    init(topics: MQTTTopics, discovery: Bool, gate: MQTTAcknowledgementGate,
         onAcknowledgement: @escaping AcknowledgementHandler, onProvenAcknowledgement: @escaping AcknowledgementHandler,
         onCallStep: CallStepHandler?, logger: Logger) {
        (self.topics, self.discovery, self.gate, self.onAcknowledgement, self.logger) =
            (topics, discovery, gate, onAcknowledgement, logger)
        (self.onProvenAcknowledgement, self.onCallStep) = (onProvenAcknowledgement, onCallStep)
    }

    func set(state: AlarmStatus, _ client: MosquittoClient) {
        current.withLock { $0.state = state }
        client.publish(topics.state, Array(state.rawValue.utf8), retain: true)
    }

    func set(worn: Bool, _ client: MosquittoClient) {
        let changed = current.withLock { c in defer { c.worn = worn }; return c.worn != worn }
        if changed { client.publish(topics.worn, Self.word(worn: worn), retain: true) }
    }

    private static func word(worn: Bool) -> [UInt8] { Array((worn ? "worn" : "not-worn").utf8) }

    func set(power new: MQTTPower, _ client: MosquittoClient) {
        let old = power.withLock { p in defer { p = new }; return p }
        guard old != new else { return }
        if discovery, old?.entities != new.entities { publishPowerDiscovery(new, client) }
        client.publish(topics.power, Self.json(new), retain: true)
    }

    func set(modem new: MQTTModem, _ client: MosquittoClient) {
        modem.withLock { $0 = new }
        client.publish(topics.modem, Self.json(new), retain: true)
    }

    private func publishPowerDiscovery(_ p: MQTTPower, _ client: MosquittoClient) {
        for config in HomeAssistantDiscovery(topics: topics, acknowledgeButton: !gate.hasSecret).powerConfigs(battery: p.battery != nil,
                                                                                                             mains: p.mains != nil) {
            client.publish(config.topic, config.payload, retain: true)
        }
    }

    func set(lastIncident: LastIncidentReport, _ client: MosquittoClient) {
        current.withLock { $0.incident = lastIncident }
        client.publish(topics.lastIncident, Self.json(lastIncident), retain: true)
    }

    func update(_ incident: String, _ client: MosquittoClient, _ change: (inout LastIncidentReport) -> Void) {
        guard let updated = current.withLock({ c -> LastIncidentReport? in
            guard var last = c.incident, last.incident == incident else { return nil }
            change(&last)
            c.incident = last
            return last
        }) else { return }
        client.publish(topics.lastIncident, Self.json(updated), retain: true)
    }

    func handle(_ event: MosquittoEvent, _ client: MosquittoClient) {
        switch event {
        case let .connected(bounded):
            logger.info("MQTT: connected", metadata: ["broker": "\(client.endpoint)"])
            client.publish(topics.availability, Array(MQTTAvailability.online.utf8), retain: true)
            if bounded {
                client.subscribe(topics.acknowledge)
                if discovery { client.subscribe(topics.homeAssistantStatus) }
            } else {
                logger.error("MQTT: \(client.endpoint) speaks only MQTT 3.1.1, which cannot bound the size of what it sends: alerts go out, but acknowledgements on \(topics.acknowledge) and Home Assistant's restarts are not read (use a broker with MQTT 5, e.g. mosquitto 1.6 or newer)")
            }
            republish(client)
        case let .refused(reason, _):
            logger.error("MQTT: \(reason)")
        case let .error(text):
            logger.error("MQTT: \(client.endpoint): \(text)")
        case let .disconnected(reason):
            logger.warning("MQTT: \(reason); reconnecting")
        case let .message(topic, payload, retained) where topic == topics.acknowledge:
            // An empty payload is a retained copy being cleared (ours included): nothing to do.
            guard !payload.isEmpty else { return }
            // The broker sends nothing over MQTTLimits.bridgePacket; an acknowledgement is a few
            // hundred bytes, and a larger one is refused before it is parsed.
            guard payload.count <= MQTTLimits.acknowledgement else {
                client.publish(topics.acknowledge, [], retain: true)
                refused("\(payload.count) bytes (an acknowledgement has at most \(MQTTLimits.acknowledgement))")
                return
            }
            // Whatever arrives, a copy the broker may keep is cleared: a message published
            // retained while we are connected arrives without the flag, and would otherwise
            // fire again at every reconnect and be read by every later subscriber.
            client.publish(topics.acknowledge, [], retain: true)
            if retained {
                refused("a retained message (acknowledgements are never retained; cleared)")
                return
            }
            acknowledge(payload)
        case let .message(topic, payload, _) where topic == topics.homeAssistantStatus:
            if payload.count <= MQTTLimits.availability, payload == Array(MQTTAvailability.online.utf8) { republish(client) }
        case .message:
            break
        }
    }

    private func republish(_ client: MosquittoClient) {
        if discovery {
            let discovered = HomeAssistantDiscovery(topics: topics, acknowledgeButton: !gate.hasSecret)
            for config in discovered.configs {
                client.publish(config.topic, config.payload, retain: true)
            }
            // A button discovered before the bridge had a secret would only send refused acks.
            for topic in discovered.withdrawn { client.publish(topic, [], retain: true) }
        }
        let (state, incident, worn) = current.withLock { $0 }
        client.publish(topics.state, Array((state ?? .monitoring).rawValue.utf8), retain: true)
        client.publish(topics.worn, Self.word(worn: worn), retain: true)
        if let incident { client.publish(topics.lastIncident, Self.json(incident), retain: true) }
        if let p = power.withLock({ $0 }) {
            if discovery { publishPowerDiscovery(p, client) }
            client.publish(topics.power, Self.json(p), retain: true)
        }
        if let m = modem.withLock({ $0 }) { client.publish(topics.modem, Self.json(m), retain: true) }
    }

    private func acknowledge(_ payload: [UInt8]) {
        let incident: String, by: String?, proven: Bool
        do {
            let ack = try MQTTAcknowledgement(payload: payload)
            if ack.step != nil, onCallStep == nil { throw MQTTAcknowledgementError("this bridge takes no call steps") }
            let checked = try gate.check(ack).get()
            // A step is never an acknowledgement: the gate passed it only with its name and
            // step signed; it is recorded on the call, and silences nothing.
            if let step = checked.step {
                guard let by = checked.provenBy, let onCallStep else { throw MQTTAcknowledgementError("a step without a proven name") }
                logger.notice("MQTT: \(step.rawValue) of \(checked.incident) received", metadata: ["by": "\(by)"])
                onCallStep(checked.incident, step, by)
                return
            }
            incident = checked.incident
            // "Acknowledged by" only from a proof that covers the name (an HMAC over it); any
            // other name is what the publisher wrote, shown only if it is a configured contact.
            proven = checked.provenBy != nil
            by = checked.provenBy ?? ack.by
        } catch {
            refused("\(error)")
            return
        }
        logger.notice("MQTT: acknowledgement of \(incident) received", metadata: by.map { ["by": "\($0)"] } ?? [:])
        (proven ? onProvenAcknowledgement : onAcknowledgement)(incident, by ?? "")
    }

    /// A refused acknowledgement, in the log at most ``RefusalLog/inFull`` times a minute.
    private func refused(_ why: String) {
        let (say, suppressed) = refusals.withLock { $0.note(now: Double(DispatchTime.now().uptimeNanoseconds) * 1e-9) }
        if suppressed > 0 {
            logger.warning("MQTT: \(suppressed) more acknowledgements on \(topics.acknowledge) refused in the last minute (not logged one by one)")
        }
        if say { logger.warning("MQTT: acknowledgement on \(topics.acknowledge) ignored: \(why)") }
    }

    private static func json<T: Encodable>(_ info: T) -> [UInt8] {
        (try? MQTTChannel.encoder.encode(info)).map { [UInt8]($0) } ?? []
    }
}

/// The largest messages FallGuard's MQTT clients take. The broker is told the packet limit on
/// CONNECT (MQTT 5 Maximum Packet Size) and drops a larger message for that client rather than
/// send it: one message of any size on a topic a bridge or the station reads must never take the
/// memory that keeps monitoring going. Within a packet, each topic keeps what its messages need.
public enum MQTTLimits {
    /// A bridge reads its acknowledgements and Home Assistant's status: 8 KiB per packet.
    public static let bridgePacket = 8 * 1024
    /// A staff station reads every bridge's state, alerts and incidents: 64 KiB per packet.
    public static let stationPacket = 64 * 1024
    /// An acknowledgement (`incident`, `by`, `time`, `hmac`): 2 KiB.
    public static let acknowledgement = 2 * 1024
    /// `online` / `offline`.
    public static let availability = 64
}

/// How many refused acknowledgements the log takes: the first ``inFull`` of each minute one by
/// one, then a count once the minute is over. A flood of junk on the ack topic (10,000 in
/// 0.3 s) must not push the fall and alert lines past journald's rate limit.
struct RefusalLog: Sendable {
    static let inFull = 5
    static let minute = 60.0
    private var windowStart = -Double.infinity
    private var inWindow = 0

    /// One refusal at `now` (seconds, monotonic): whether to log it in full, and how many the
    /// minute that just ended did not log (to be said as a count).
    mutating func note(now: Double) -> (logInFull: Bool, suppressed: Int) {
        var suppressed = 0
        if now - windowStart >= Self.minute {
            suppressed = max(0, inWindow - Self.inFull)
            (windowStart, inWindow) = (now, 0)
        }
        inWindow += 1
        return (inWindow <= Self.inFull, suppressed)
    }

    /// Refusals of the current minute not logged yet.
    var pending: Int { max(0, inWindow - Self.inFull) }
}
