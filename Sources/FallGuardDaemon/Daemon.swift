import Atomics
import FallGuardConfig
import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware
import FallGuardNotify
import FallGuardSystemd
import FallGuardWeb
import Foundation
import Logging
import NIOSSL
import Prometheus
import ServiceLifecycle
import Synchronization

/// Why the daemon could not start, with the exit status for it (sysexits.h).
public struct DaemonStartError: Error, CustomStringConvertible {
    public var description: String
    public var status: Int32

    public init(description: String, status: Int32) { (self.description, self.status) = (description, status) }
}

/// Where this run of the program began, for figures that must not include what ran before
/// it in the same process (`swift run` builds, then execs the program in its own process).
public struct ProgramStart: Sendable {
    public let nanoseconds: Int64
    public let usage: ProcessUsage

    /// Now: call it first thing in a command.
    public static func now() -> ProgramStart { ProgramStart(nanoseconds: MonotonicClock.nanoseconds(), usage: .current()) }

    public var seconds: Double { Double(MonotonicClock.nanoseconds() - nanoseconds) * 1e-9 }
}

/// `fallguard run`: sensor → ring buffer → detector → alert engine → buzzer / LED / button →
/// outbox → notifiers, each part a service (``services``) in one ServiceGroup. SIGTERM and
/// SIGINT shut down gracefully (the alarm silenced, a cut-short countdown's alert dispatched,
/// pending deliveries drained for up to `state.drain-on-stop` seconds, the rest left in the
/// outbox for the next start); SIGHUP reloads the configuration without touching an incident
/// in progress.
///
/// This type only assembles: each service gets the parts it uses (``LocalAlarm``,
/// ``SensorLoop``, ``Notifiers``, ``FieldRecorder``, ``DaemonHealth``, ``StatusPublisher``,
/// ``StartupRecovery``, ``ConfigurationReload``), none gets the daemon.
///
/// Health: the daemon keeps running whatever fails after start-up, and says so. What keeps
/// alerts from being stored or sent, or the incident log from being written, is a problem
/// (``DaemonHealth``): in `status.json`, the `fallguard_healthy` gauge, and the LED's fault
/// pattern in place of the heartbeat. The systemd watchdog is fed only while the sample loop,
/// the alarm thread and the delivery worker all go round (``Liveness``): a hung thread is
/// restarted; a failing disk is not (a restart would not mend it, and the alarm still sounds).
///
/// ```swift
/// let daemon = try Daemon(configuration: .demo(), registry: registry, logger: logger)
/// try await daemon.run(duration: 60)
/// ```
public final class Daemon: Sendable {
    public let current: CurrentConfiguration
    let logger: Logger
    let loop: SensorLoop
    /// The buzzer, LED, button and the controller on them.
    let local: LocalAlarm
    public let notifiers: Notifiers
    /// The incident archive and, with `recording.enabled`, the continuous recording.
    public let recorder: FieldRecorder
    /// The last minute of |a| for open pages (idle while none is open).
    public let live = LiveSignal()
    let health: DaemonHealth
    let publisher: StatusPublisher
    /// The battery and the mains (`power:`); nil when not enabled.
    let power: PowerMonitor?
    let recovery: StartupRecovery
    let readiness: Readiness
    let counters = SensorCounters()
    let systemd: SystemdNotifier?
    let watchdog: WatchdogPinger?
    /// The threads the watchdog waits for besides the sample loop.
    let liveness: Liveness
    static let alarmThread = "alarm thread", deliveryWorker = "delivery worker"
    /// How long the alarm thread or the delivery worker may go without a pass: twice the
    /// longest either sleeps, so a live one is never taken for stalled.
    static let livenessAllowance = Int64(2 * max(AlarmController.longestSleep, DeliveryWorker.longestSleep) * 1e9)
    let registry: PrometheusCollectorRegistry
    let start: ProgramStart
    /// The server's TLS (`web.tls-certificate`, `web.tls-key`).
    let tls: TLSConfiguration?

    /// The alarm controller (its engine's snapshot, inputs from tests).
    public var alarm: AlarmController { local.controller }

    /// Builds every part (nothing runs until ``run(duration:)``). `outputs` overrides the
    /// configuration's choice of buzzer, LED and button (tests pass in-memory GPIO parts).
    public init(configuration: DaemonConfiguration, registry: PrometheusCollectorRegistry, logger: Logger,
                start: ProgramStart = .now(), outputs: AlarmOutputs? = nil,
                onReady: @escaping @Sendable () -> Void = {}) throws(DaemonStartError) {
        let current = CurrentConfiguration(configuration)
        self.current = current
        self.registry = registry
        self.logger = logger
        self.start = start
        let state = configuration.stateDirectory
        // The state directory holds health data and delivery receipts: 0700 and files 0600,
        // started by systemd (UMask=0077) or by hand (`sudo fallguard run` with umask 022).
        umask(0o077)
        // Until the reload service traps it: a SIGHUP right after READY=1 (`monitoring:` is said
        // before that service runs) would otherwise end the process by its default action; it
        // is remembered and applied when that service starts.
        EarlyHangup.catchUntilTrapped()
        // A state directory that cannot be made or must not be used (another user owns it or
        // may write in it) does not stop the daemon: it monitors and alerts as on a read-only
        // disk (alerts held in memory, sent directly), says why, and tries again every second.
        let stateDirectoryProblem = StateFiles.prepare(state)
        if let why = stateDirectoryProblem {
            logger.critical("state directory not used: \(why); monitoring anyway, alerts are held in memory and sent directly through the channels")
        }
        let systemd = try? SystemdNotifier.fromEnvironment()
        self.systemd = systemd
        let liveness = Liveness()
        self.liveness = liveness
        watchdog = (try? WatchdogPinger.fromEnvironment(liveness: liveness)) ?? nil
        let source = try Self.makeSource(configuration)
        let detectorConfiguration: DetectorConfiguration
        do { detectorConfiguration = try configuration.detector.configuration() } catch {
            throw DaemonStartError(description: "detector: \(error)", status: 78)
        }
        let incidentLog: IncidentLog
        do { incidentLog = try IncidentLog(stateDirectory: state) } catch {
            throw DaemonStartError(description: "alarm: \(error)", status: 74)   // EX_IOERR: systemd restarts it
        }
        if let problem = incidentLog.problem {
            logger.critical("\(problem); monitoring anyway, retrying on every incident event (fix: chown fallguard: \(incidentLog.path))")
        }
        // Built once, before any GPIO line is requested: a bad alarm section stops start-up first.
        let alert: AlertConfiguration
        do throws(AlertConfigurationError) { alert = try configuration.alarm.alertConfiguration() } catch {
            throw DaemonStartError(description: "alarm: \(AlarmSection.message(for: error))", status: 78)
        }
        let opened: AlarmOutputs
        if let outputs { opened = outputs } else {
            opened = try LocalAlarm.outputs(configuration.gpio.enabled ? .gpio : .console,
                                            alarm: configuration.alarm, gpio: configuration.gpio, logger: logger)
        }
        let webSection = configuration.web
        if let files = webSection.tls {
            do { tls = try MetricsEndpoint.tls(certificate: files.certificate, key: files.key) } catch {
                throw DaemonStartError(description: "web.tls-certificate / web.tls-key: \(files.certificate), \(files.key): \(error)", status: 78)
            }
        } else {
            tls = nil
        }
        // Last of what can fail: a failure after it would drop an HTTP client never shut down.
        let notifiers = try Notifiers(configuration: configuration, logger: logger, onDeliveryPass: {
            liveness.pass(Daemon.deliveryWorker, nowNanoseconds: MonotonicClock.nanoseconds())
        })
        self.notifiers = notifiers
        let recording = configuration.recording
        let outbox = notifiers.outbox
        let recorder = FieldRecorder(
            stateDirectory: state, recordingFolder: recording.enabled ? recording.folder(stateDirectory: state) : nil,
            keepBytes: recording.keepBytes, flushInterval: recording.flushInterval,
            before: recording.incidentBefore, after: recording.incidentAfter,
            detector: Self.detectorInfo(detectorConfiguration), logger: Logger(label: "fallguard.recorder"),
            deliveries: { id in FieldRecorder.deliveries(of: id, in: outbox) })
        self.recorder = recorder
        let counters = self.counters
        let metrics = DaemonMetrics()
        // Cannot fail now: the outputs are open and the alarm section was checked above.
        local = try LocalAlarm(alarm: configuration.alarm, alert: alert, gpio: configuration.gpio, outputs: .none, opened: opened,
                               speech: configuration.speech, sink: notifiers.sink, incidentLog: incidentLog, logger: logger,
                               observers: [
                                   { _, effects in recorder.record(effects.compactMap { if case let .record(e) = $0 { e } else { nil } }) },
                                   notifiers.engineChanged,
                                   { _, effects in for effect in effects { if case .dispatch = effect { metrics.alerts.increment() } } },
                               ])
        let alarm = local.controller
        alarm.onPass = { liveness.pass(Daemon.alarmThread, nowNanoseconds: MonotonicClock.nanoseconds()) }
        loop = SensorLoop(source: source, detector: detectorConfiguration.makeDetector())
        health = DaemonHealth(current: current, liveness: liveness, notifiers: notifiers, incidentLog: incidentLog,
                              recorder: recorder, alarm: alarm, systemd: systemd, logger: logger,
                              stateDirectoryProblem: stateDirectoryProblem)
        power = configuration.power.enabled
            ? PowerMonitor(configuration.power, notifiers: notifiers, incidentPrefix: configuration.alarm.incidentPrefix,
                           logger: Logger(label: "fallguard.power"))
            : nil
        publisher = StatusPublisher(current: current, alarm: alarm, loop: loop, notifiers: notifiers, recorder: recorder,
                                    live: live, health: health, counters: counters, metrics: metrics, power: power,
                                    gpio: opened.library?.description,
                                    logger: logger)
        readiness = Readiness(current: current, start: start, replaying: source is ReplaySource,
                              channels: { (notifiers.summary, notifiers.channelsConfigured) },
                              publisher: publisher, systemd: systemd, onReady: onReady, logger: logger)
        recovery = StartupRecovery(alarm: alarm, outbox: notifiers.outbox, sink: notifiers.sink, incidentLog: incidentLog, logger: logger)
        recovery.takeOver(alertTimeout: alarm.alertConfiguration.alertTimeout)
    }

    /// The detector as the incident archive records it: name, every setting, the software.
    static func detectorInfo(_ d: DetectorConfiguration) -> IncidentRecord.DetectorInfo {
        IncidentRecord.DetectorInfo(name: d.name, settings: d.settings.values, software: "fallguard \(fallguardVersion)")
    }

    /// The configuration in force (a reload replaces it).
    public var configuration: DaemonConfiguration { current.now }

    /// What keeps alerts from going out or the record from being kept; empty when all is well.
    public var problems: [String] { health.problems }

    /// Every part as a service, in start order (they stop in reverse order).
    public var services: [any Service] {
        let c = configuration
        var services: [any Service] = notifiers.services(drainOnStop: c.state.drainOnStop)
        services.append(AcknowledgementService(inbox: notifiers.inbox, alarm: alarm))
        services.append(ProgressService(progress: notifiers.outbox.progress, alarm: alarm, progressed: notifiers.progressed,
                                        recorder: recorder))
        services.append(AlarmService(alarm: local, liveness: liveness, recovery: recovery))
        services.append(RecorderService(recorder: recorder))
        services.append(SensorService(loop: loop, router: SensorRouter(alarm: alarm, counters: counters, logger: logger),
                                      wear: WearWatch(alarm: alarm, notWornAlert: alarm.alertConfiguration.notWornAlert),
                                      recorder: recorder, live: live, watchdog: watchdog, readiness: readiness,
                                      systemd: systemd, logger: logger))
        services.append(HealthService(health: health))
        if let power { services.append(PowerService(monitor: power)) }
        services.append(StatusService(publisher: publisher))
        if c.metrics.enabled || c.web.enabled, let address = c.metrics.address {
            services.append(MetricsService(registry: registry, address: (address.host, address.port),
                                           listen: c.metrics.listen, web: c.web.enabled ? makeWebSite(c, host: address.host) : nil,
                                           tls: tls, logger: logger))
        }
        services.append(ReloadService(reload: ConfigurationReload(current: current, loop: loop, recorder: recorder,
                                                                  reloadNotifiers: { [notifiers] in notifiers.reload($0) }, systemd: systemd, logger: logger)))
        return services
    }

    /// The page, on the server at `metrics.listen`.
    func makeWebSite(_ c: DaemonConfiguration, host: String) -> WebSite {
        let outbox = notifiers.outbox
        let redactor = c.redactor
        let publisher = self.publisher
        return WebSite(access: WebAccess(password: c.web.password, sessionHours: c.web.sessionHours), live: live,
                       loopbackOnly: c.metrics.onLoopback, secure: tls != nil,
                       status: { publisher.pageStatusJSON(publisher.currentStatus()) },
                       cachedStatus: { publisher.cachedPageStatus },
                       archive: IncidentArchive(folder: IncidentArchive.folder(inState: c.stateDirectory)),
                       deliveries: { incident in
                           ((try? outbox.deliveries(incident: incident, newest: incident == nil ? 200 : nil)) ?? []).map {
                               WebDelivery(incident: $0.incident, channel: $0.channel, to: $0.delivery.recipient?.name,
                                           state: $0.state.rawValue, attempts: $0.attempts, error: $0.lastError.map(redactor.redact),
                                           created: isoTimestamp(Date(timeIntervalSince1970: $0.createdAt)))
                           }
                       },
                       logger: Logger(label: "fallguard.web"))
    }

    /// The sensor: a recording played in real time (demo, field tests) or the IIO device.
    static func makeSource(_ c: DaemonConfiguration) throws(DaemonStartError) -> any SampleSource {
        if c.path == nil, !c.liveDemo {
            let r = BundledRecordings.parse(BundledRecordings.demoFall)
            return ReplaySource(name: "demo: \(BundledRecordings.demoFallName)", recording: r.samples)
        }
        if let replay = c.sensor.replay {
            do {
                return try ReplaySource.file(replay)
            } catch {
                throw DaemonStartError(description: "sensor.replay: \(error.description)", status: error.status)
            }
        }
        let s = c.sensor
        return AccelerometerSource(configuration: AccelerometerConfiguration(
            uri: s.uri, device: s.device, minimumRangeG: s.rangeG, preferBuffered: s.mode != .polled,
            requireBuffered: s.mode == .buffered, mountMatrix: s.mountMatrix, cpu: s.cpu))
    }

    /// Runs every service until SIGTERM / SIGINT, or for `duration` seconds.
    public func run(duration: Double? = nil) async throws {
        let now = MonotonicClock.nanoseconds()
        for part in [Self.alarmThread, Self.deliveryWorker] {
            liveness.watch(part, allowanceNanoseconds: Self.livenessAllowance, nowNanoseconds: now)
        }
        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: Logger(label: "fallguard.services")))
        if let duration {
            Task {
                try? await Task.sleep(for: .seconds(duration))
                await group.triggerGracefulShutdown()
            }
        }
        try await group.run()
        let usage = ProcessUsage.current()
        let uptime = start.seconds
        let cpu = usage.cpuSeconds - start.usage.cpuSeconds
        logger.notice("stopped after \(String(format: "%.1f", uptime)) s: CPU \(String(format: "%.3f", cpu)) s (\(String(format: "%.3f", 100 * cpu / max(uptime, 1e-9))) % of one core) since the command started, max RSS \(usage.maxResidentKiB) KiB\(start.usage.cpuSeconds < 0.5 ? "" : " (the peak of this whole process, with what ran in it before the command)")")
    }

    /// The status as `status.json` has it, now.
    func currentStatus() -> DaemonStatus { publisher.currentStatus() }
}
