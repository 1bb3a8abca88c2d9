import AsyncHTTPClient
import FallGuardCore
import FallGuardHardware
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Logging
import ServiceLifecycle

/// The daemon's notifier side: the durable outbox the alarm hands alerts to, the delivery
/// worker and the MQTT bridge as services, the daily heartbeat, and what the status shows.
final class Notifiers: @unchecked Sendable {
    // @unchecked: `last` is guarded by `lock`; the rest is immutable.
    let outbox: Outbox
    let sink: any AlertSink
    let summary: String
    private let client: HTTPClient
    private let context: ChannelContext
    private let mqtt: [MQTTChannel]
    private let worker: DeliveryWorker
    private let logger: Logger
    private let lock = NSLock()
    private var last: DaemonStatus.Incident?
    private let relay = AcknowledgementRelay()

    init(configuration: DaemonConfiguration, logger: Logger) throws(DaemonStartError) {
        registerChannelTypes()
        self.logger = logger
        let settings = configuration.notify.effective
        let path = configuration.stateDirectory + "/" + Outbox.fileName
        do {
            outbox = try Outbox(path: path, settings: settings, logger: Logger(label: "fallguard.outbox"))
        } catch {
            throw DaemonStartError(description: "state.directory: cannot open the outbox \(path): \(error)", status: 73)
        }
        sink = outbox
        // A countdown the last process did not finish (crash, watchdog, power cut): its alert goes out.
        do { try outbox.resumeInterruptedCountdowns() } catch {
            logger.critical("outbox: cannot check for interrupted countdowns: \(error)")
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton,
                            configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5))))
        let relay = self.relay
        context = ChannelContext(
            httpClient: client, logger: Logger(label: "fallguard.notify"),
            write: { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) },
            acknowledgements: { incident, by in relay.forward(incident, by) })
        let channels: [any NotificationChannel]
        do {
            channels = try settings.makeChannels(context: context)
        } catch {
            try? client.syncShutdown()
            throw DaemonStartError(description: "channels: \(error)", status: 78)
        }
        mqtt = channels.compactMap { $0 as? MQTTChannel }
        worker = DeliveryWorker(outbox: outbox, channels: channels)
        summary = channels.map(\.name).joined(separator: ", ") + " (outbox \(path))"
    }

    /// Remote acknowledgements (MQTT) go to `handler` (the alarm controller).
    func onAcknowledgement(_ handler: @escaping AcknowledgementHandler) {
        relay.set(handler)
    }

    /// The delivery worker (pending deliveries of an earlier run resume at once), the MQTT
    /// connections, and the daily heartbeat.
    var services: [any Service] {
        [
            ClosureService("mqtt") { [self] in
                mqtt.forEach { $0.start() }
                try? await gracefulShutdown()
                for m in mqtt { await m.stop() }
            },
            ClosureService("outbox") { [self] in
                // Cancelled on graceful shutdown; pending deliveries stay in the file.
                await cancelWhenGracefulShutdown { await self.worker.run() }
                try? await client.shutdown()
            },
            ClosureService("heartbeat") { [self] in
                await cancelWhenGracefulShutdown {
                    while let next = self.settings.policy.nextHeartbeat(after: Date()) {
                        do { try await Task.sleep(for: .seconds(max(1, next.timeIntervalSinceNow))) } catch { return }
                        do { try self.outbox.enqueueHeartbeat() } catch { self.logger.error("heartbeat: \(error)") }
                    }
                }
            },
        ]
    }

    /// After every batch of engine effects (alarm thread): the MQTT state and last incident.
    func engineChanged(_ engine: AlertEngine, _ effects: [AlertEffect]) {
        let state: StatusIndicator
        switch engine.state {
        case .monitoring: state = engine.sensorFault == nil ? .monitoring : .fault
        case .countdown: state = .countdown
        case .alertActive: state = .alertOut
        }
        mqtt.forEach { $0.publish(state: state) }
        for case let .dispatch(alert) in effects {
            lock.withLock { last = .init(id: alert.incident, kind: alert.kind.rawValue, at: isoTimestamp()) }
            mqtt.forEach { $0.publish(lastIncident: alert, at: Date()) }
        }
    }

    /// Contacts, channels, policy, templates: what the outbox uses now.
    var settings: NotificationSettings { outbox.settings }

    /// SIGHUP: applies the notifier settings of `configuration` (contacts, wearer, templates,
    /// policy, and every channel but MQTT, whose connections are services) to new alerts and
    /// escalations; committed deliveries keep their messages and keys. Changed MQTT channels
    /// need a restart, and then nothing of the notifiers changes, so that a policy never names
    /// a channel that does not exist.
    func reload(_ configuration: DaemonConfiguration) -> NotifierReload {
        let new = configuration.notify.effective
        let old = settings
        guard Self.fingerprint(new) != Self.fingerprint(old) else { return .unchanged }
        func mqttChannels(_ s: NotificationSettings) -> NotificationSettings {
            var s = s
            s.channels = s.channels.filter { $0.value.type == MQTTChannelSettings.type }
            return s
        }
        guard Self.fingerprint(mqttChannels(new).channels) == Self.fingerprint(mqttChannels(old).channels) else {
            return .needsRestart("the MQTT channels changed")
        }
        var others = new
        others.channels = new.channels.filter { $0.value.type != MQTTChannelSettings.type }
        do {
            worker.replaceChannels(try others.makeChannels(context: context) + mqtt)
        } catch {
            return .needsRestart("channels: \(error)")
        }
        outbox.update(settings: new)
        var changed: [String] = []
        if Self.fingerprint(new.contacts) != Self.fingerprint(old.contacts) { changed.append("contacts") }
        if Self.fingerprint(new.wearer) != Self.fingerprint(old.wearer) { changed.append("wearer") }
        if Self.fingerprint(new.channels) != Self.fingerprint(old.channels) { changed.append("channels") }
        if Self.fingerprint(new.policy) != Self.fingerprint(old.policy) { changed.append("policy") }
        if Self.fingerprint(new.templates) != Self.fingerprint(old.templates) { changed.append("templates") }
        if new.device != old.device { changed.append("device") }
        return .applied(changed)
    }

    /// Settings compared by their JSON (secrets included; never logged).
    private static func fingerprint(_ value: some Encodable) -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return (try? e.encode(value)) ?? Data()
    }

    func outboxStatus() -> DaemonStatus.Outbox? {
        guard let m = try? outbox.metrics() else { return nil }
        return .init(pending: m.pending, sent: m.sent, failed: m.failed,
                     oldestPendingAge: m.pending > 0 ? m.oldestPendingAge : nil)
    }

    var lastIncident: DaemonStatus.Incident? { lock.withLock { last } }
}

/// What a SIGHUP did to the notifiers.
enum NotifierReload: Equatable {
    case unchanged
    /// The parts that changed, in effect for new alerts.
    case applied([String])
    /// Not applied (why); the settings loaded before stay.
    case needsRestart(String)
}

/// Hands acknowledgements from the channels (built first) to the alarm (built later).
final class AcknowledgementRelay: @unchecked Sendable {
    // @unchecked: `handler` is guarded by `lock`.
    private let lock = NSLock()
    private var handler: AcknowledgementHandler?

    func set(_ h: @escaping AcknowledgementHandler) { lock.withLock { handler = h } }

    func forward(_ incident: String, _ by: String) {
        let h = lock.withLock { handler }
        h?(incident, by)
    }
}
