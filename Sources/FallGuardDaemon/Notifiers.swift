import AsyncHTTPClient
import FallGuardConfig
import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The daemon's notifier side: the durable outbox the alarm hands alerts to (through the
/// hand-off that holds what the outbox cannot take), the delivery worker and the MQTT bridge
/// as services, the daily heartbeat, and what the status shows.
public final class Notifiers: Sendable {
    public let outbox: Outbox
    /// The alarm's sink: the outbox, or memory and a direct send while the outbox fails.
    public let handOff: OutboxHandOff
    public var sink: any AlertSink { handOff }
    public let summary: String
    /// Where acknowledgements from every channel arrive (made before the channels).
    public let inbox: AcknowledgementInbox
    private let client: HTTPClient
    private let context: ChannelContext
    private let mqtt: [MQTTChannel]
    private let worker: DeliveryWorker
    /// Call outcomes and SMS replies, read from the provider while an alarm is open.
    private let followUp: CaregiverFollowUp
    /// The modem of the `modem` channels: its state and problems.
    let modem: ModemWatch
    private let logger: Logger
    private let last = Mutex<DaemonStatus.Incident?>(nil)
    /// Whether the outbox was checked for countdowns an earlier process left armed.
    private let countdownsChecked = Mutex(false)
    /// The configuration names no channel (``NotifySections/nobodyWillBeTold``): a problem
    /// until a reload brings one.
    private let nobodyToTell: Mutex<Bool>

    /// `onDeliveryPass` is called on every pass of the delivery worker (the watchdog counts them).
    public init(configuration: DaemonConfiguration, logger: Logger,
                onDeliveryPass: @escaping @Sendable () -> Void = {}) throws(DaemonStartError) {
        self.logger = logger
        nobodyToTell = Mutex(configuration.notify.nobodyWillBeTold)
        let settings = configuration.notify.effective
        let state = configuration.stateDirectory
        let path = state + "/" + Outbox.fileName
        // An outbox that cannot be opened (a read-only or full disk, a state directory that
        // must not be used) does not stop the daemon: the hand-off holds alerts in memory and
        // sends them directly, and the file is tried again every second.
        outbox = Outbox(path: path, settings: settings, logger: Logger(label: "fallguard.outbox"),
                        clock: SteadyWallClock(), folderCheck: { StateFiles.prepare(state) })
        if let why = outbox.retryOpen() {
            logger.critical("the outbox cannot be opened: \(why); monitoring anyway: alerts are held in memory and sent directly through the channels, the file is tried again every second")
        }
        handOff = OutboxHandOff(outbox: outbox)
        // A countdown the last process did not finish (crash, watchdog, power cut): its alert goes out.
        // (An outbox not open yet is checked once it opens: see `maintainStorage()`.)
        let checkedAtStart = outbox.unavailable == nil
        if checkedAtStart {
            do { try outbox.resumeInterruptedCountdowns() } catch {
                logger.critical("outbox: cannot check for interrupted countdowns: \(error)")
            }
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton,
                            configuration: .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5))))
        let inbox = AcknowledgementInbox(contactNames: settings.contacts.map(\.name))
        self.inbox = inbox
        context = ChannelContext(
            httpClient: client, logger: Logger(label: "fallguard.notify"),
            write: { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) },
            acknowledgements: inbox.handler, provenAcknowledgements: inbox.provenHandler, callSteps: inbox.stepHandler,
            clockSynchronized: { SystemClock.synchronized() })
        // The file was checked; a channel that cannot start fails on I/O (a TLS file it cannot
        // read, say). The alarm and the other channels start anyway and its deliveries wait: a
        // reload (SIGHUP) starts it once the file is there (an MQTT channel needs a restart).
        let (channels, failures) = settings.makeEachChannel(context: context)
        for (name, error) in failures.sorted(by: { $0.key < $1.key }) {
            logger.critical("channel \(name) cannot start: \(error); monitoring without it, its deliveries wait")
        }
        mqtt = channels.compactMap { $0 as? MQTTChannel }
        worker = DeliveryWorker(outbox: outbox, channels: channels, unavailable: failures.mapValues { "\($0)" },
                                onPass: onDeliveryPass)
        summary = channels.map(\.name).joined(separator: ", ") + " (outbox \(path))"
        followUp = CaregiverFollowUp(outbox: outbox, client: client, inbox: inbox)
        let (sink, store, brokers) = (handOff, outbox, mqtt)
        modem = ModemWatch(settings: { store.settings }, incidentPrefix: configuration.alarm.incidentPrefix,
                           logger: Logger(label: "fallguard.modem"),
                           tell: { alert in
                               do { try sink.deliver(alert) } catch {
                                   logger.critical("\(alert.incident): the modem's alert could not be handed over: \(error)")
                               }
                           },
                           published: { status in brokers.forEach { $0.publish(modem: MQTTModem(status)) } })
        countdownsChecked.withLock { $0 = checkedAtStart }
    }

    /// The delivery worker with the hand-off's retries (pending deliveries of an earlier run
    /// resume at once; a stop drains for up to `drainOnStop` seconds), the MQTT connections,
    /// and the daily heartbeat.
    public func services(drainOnStop: Double) -> [any Service] {
        [MQTTBridgeService(channels: mqtt),
         DeliveryService(worker: worker, handOff: handOff, client: client, drain: drainOnStop, logger: logger),
         FollowUpService(followUp: followUp),
         HeartbeatService(outbox: outbox, logger: logger),
         ModemService(watch: modem)]
    }

    /// Once a second (health service): the outbox file tried again while it cannot be opened;
    /// once it opens after start, the countdowns an earlier process left armed go out.
    public func maintainStorage() {
        guard outbox.retryOpen() == nil,
              countdownsChecked.withLock({ checked in defer { checked = true }; return !checked }) else { return }
        do { try outbox.resumeInterruptedCountdowns() } catch {
            logger.critical("outbox: cannot check for interrupted countdowns: \(error)")
        }
    }

    /// What keeps alerts from going out: the hand-off's and the worker's trouble. Reads only.
    public var problems: [String] {
        let closed = outbox.unavailable.map { "the outbox cannot be opened (\($0)): alerts are held in memory and sent directly through the channels; tried again every second" }
        let nobody = nobodyToTell.withLock { $0 } ? NotifySections.nobodyWillBeToldMessage : nil
        return [nobody, closed, handOff.problem, worker.problem, modem.problem].compactMap { $0 } + worker.unavailableChannels
    }

    /// How many channels the configuration names (0: nobody will be told).
    public var channelsConfigured: Int { nobodyToTell.withLock { $0 } ? 0 : settings.channels.count }

    /// After every batch of engine effects (alarm thread): the MQTT state and last incident.
    @Sendable public func engineChanged(_ engine: AlertEngine, _ effects: [AlertEffect]) {
        mqtt.forEach { $0.publish(state: engine.status); $0.publish(worn: engine.notWorn == nil) }
        for effect in effects {
            if case let .record(e) = effect, e.event == .staffPresent || e.event == .staffReset,
               let a = engine.accepted, a.incident == e.incident {
                // The station's call goes on at the bedside, then ends (issue 37): in the status.
                let at = isoTimestamp()
                last.withLock { l in
                    guard var incident = l, incident.id == a.incident else { return }
                    if e.event == .staffReset {
                        (incident.resetBy, incident.resetAt) = (a.resetBy, at)
                    } else {
                        (incident.presentBy, incident.presentAt) = (a.presentBy ?? a.by, at)
                    }
                    l = incident
                }
                // Presence by the button is news to the station; its own steps it has already.
                if e.event == .staffPresent, a.presentBy == nil { mqtt.forEach { $0.publish(presenceOf: a.incident, by: a.by, at: at) } }
            }
            guard case let .dispatch(alert) = effect else { continue }
            last.withLock { $0 = .init(id: alert.incident, kind: alert.kind.rawValue, at: isoTimestamp(),
                                       acknowledgedBy: alert.acknowledgedBy) }
            mqtt.forEach { $0.publish(lastIncident: alert, at: Date()) }
        }
    }

    /// The power supplies changed (power service): the retained power topic of every MQTT channel.
    func powerChanged(_ reading: PowerReading) {
        mqtt.forEach { $0.publish(power: reading) }
    }

    /// What became of a message (progress service): the last incident's `delivered` and
    /// `reached_by`, in the status and on MQTT.
    public func progressed(_ p: DeliveryProgress) {
        let reachedBy: String?
        switch p {
        case .delivered: reachedBy = nil
        case let .reached(_, _, contact): reachedBy = contact
        case .failed, .notReached, .reply: return
        }
        let isLast = last.withLock { l -> Bool in
            guard var incident = l, incident.id == p.incident,
                  incident.kind == AlertKind.fall.rawValue || incident.kind == AlertKind.helpRequested.rawValue else { return false }
            incident.delivered = true
            incident.reachedBy = reachedBy ?? incident.reachedBy
            l = incident
            return true
        }
        if isLast { mqtt.forEach { $0.publish(progressOf: p.incident, delivered: true, reachedBy: reachedBy) } }
    }

    /// Contacts, channels, policy, templates: what the outbox uses now.
    public var settings: NotificationSettings { outbox.settings }

    /// SIGHUP: applies the notifier settings of `configuration` (contacts, wearer, templates,
    /// policy, and every channel but MQTT, whose connections are services) to new alerts and
    /// escalations; committed deliveries keep their messages and keys. Changed MQTT channels
    /// need a restart, and then nothing of the notifiers changes, so that a policy never names
    /// a channel that does not exist.
    public func reload(_ configuration: DaemonConfiguration) -> NotifierReload {
        let new = configuration.notify.effective
        let old = settings
        guard new != old || !worker.unavailableChannels.isEmpty else { return .unchanged }
        defer { if outbox.settings == new { nobodyToTell.withLock { $0 = configuration.notify.nobodyWillBeTold } } }
        func mqttChannels(_ s: NotificationSettings) -> [String: any ChannelOptions] {
            s.channels.filter { $0.value is MQTTChannelSettings }
        }
        guard mqttChannels(new).isSame(as: mqttChannels(old)) else {
            return .needsRestart("the MQTT channels changed")
        }
        var others = new
        others.channels = new.channels.filter { !($0.value is MQTTChannelSettings) }
        do {
            worker.replaceChannels(try others.makeChannels(context: context) + mqtt)
        } catch {
            return .needsRestart("channels: \(error)")
        }
        outbox.update(settings: new)
        var changed: [String] = []
        if new.contacts != old.contacts { changed.append("contacts") }
        if new.wearer != old.wearer { changed.append("wearer") }
        if !new.channels.isSame(as: old.channels) { changed.append("channels") }
        if new.policy != old.policy { changed.append("policy") }
        if new.templates != old.templates { changed.append("templates") }
        if new.device != old.device { changed.append("device") }
        return .applied(changed)
    }

    public func outboxStatus() -> DaemonStatus.Outbox? {
        guard let m = try? outbox.metrics() else { return nil }
        return .init(pending: m.pending, sent: m.sent, failed: m.failed,
                     oldestPendingAge: m.pending > 0 ? m.oldestPendingAge : nil, quarantined: m.quarantined,
                     heldInMemory: handOff.heldCount)
    }

    public var lastIncident: DaemonStatus.Incident? { last.withLock { $0 } }

    var modemStatus: DaemonStatus.Modem? { modem.status }
    var lastHeartbeat: DeliveryRecord? { (try? outbox.deliveries(incident: "heartbeat", newest: 1))?.last }
    var heldInMemory: Int { handOff.heldCount }
}

/// What the health service uses of the notifiers: their problems (a read), the outbox's upkeep
/// once a second (``Notifiers/maintainStorage()``, the wall clock's steps) and the sink a
/// storage problem's alert goes to.
protocol NotifierUpkeep: Sendable {
    var problems: [String] { get }
    func maintainStorage()
    var outbox: Outbox { get }
    var sink: any AlertSink { get }
}

/// What the status service reads of the notifiers: snapshots only.
protocol NotifierSnapshots: Sendable {
    var lastIncident: DaemonStatus.Incident? { get }
    func outboxStatus() -> DaemonStatus.Outbox?
    var modemStatus: DaemonStatus.Modem? { get }
    /// The newest heartbeat message (the page shows when it was made and how it went).
    var lastHeartbeat: DeliveryRecord? { get }
    /// How many channels the configuration names (0: nobody will be told).
    var channelsConfigured: Int { get }
    /// Alerts the hand-off holds in memory while the outbox cannot take them.
    var heldInMemory: Int { get }
}

extension Notifiers: NotifierUpkeep, NotifierSnapshots {}

/// What a SIGHUP did to the notifiers.
public enum NotifierReload: Equatable, Sendable {
    case unchanged
    /// The parts that changed, in effect for new alerts.
    case applied([String])
    /// Not applied (why); the settings loaded before stay.
    case needsRestart(String)
}
