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
/// Health: the daemon keeps running whatever fails after start-up, and says so. What keeps
/// alerts from being stored or sent, or the incident log from being written, is a problem in
/// ``problems``: in `status.json`, the `fallguard_healthy` gauge, and the LED's fault pattern
/// in place of the heartbeat. The systemd watchdog is fed only while the sample loop, the
/// alarm thread and the delivery worker all go round (``liveness``): a hung thread is
/// restarted; a failing disk is not (a restart would not mend it, and the alarm still sounds).
///
/// ```swift
/// let daemon = try Daemon(configuration: .demo(), registry: registry, logger: logger)
/// try await daemon.run(duration: 60)
/// ```
public final class Daemon: Sendable {
    /// Replaced by a reload (SIGHUP) while the status service reads it.
    private let current: Mutex<DaemonConfiguration>
    let logger: Logger
    let source: any SampleSource
    let loop: SensorLoop
    public let alarm: AlarmController
    let outputs: AlarmOutputs
    public let notifiers: Notifiers
    let systemd: SystemdNotifier?
    let watchdog: WatchdogPinger?
    /// The threads the watchdog waits for besides the sample loop.
    let liveness: Liveness
    static let alarmThread = "alarm thread", deliveryWorker = "delivery worker"
    /// How long the alarm thread or the delivery worker may go without a pass: twice the
    /// longest either sleeps, so a live one is never taken for stalled.
    static let livenessAllowance = Int64(2 * max(AlarmController.longestSleep, DeliveryWorker.longestSleep) * 1e9)
    let incidentLog: IncidentLog
    /// Incident ids begin with it (`alarm.incident-prefix`).
    let incidentPrefix: String
    /// The incident archive and, with `recording.enabled`, the continuous recording.
    public let recorder: FieldRecorder
    let metrics = DaemonMetrics()
    let registry: PrometheusCollectorRegistry
    let started = Date()
    let start: ProgramStart
    let onReady: @Sendable () -> Void
    let detections = ManagedAtomic<Int>(0)
    let faultsRaised = ManagedAtomic<Int>(0)
    /// The device name the sensor loop reports problems under.
    private let deviceName = Mutex("sensor")
    /// The last minute of |a| for open pages (idle while none is open).
    public let live = LiveSignal()
    /// The server's TLS (`web.tls-certificate`, `web.tls-key`).
    let tls: TLSConfiguration?
    /// The status as open pages get it, made by the status service while one is open.
    private let pageStatus = Mutex<(version: Int, json: String)?>(nil)
    /// What the page last got, without the fields that change every second.
    private let pageStatusShown = Mutex<DaemonStatus?>(nil)

    /// Builds every part (nothing runs until ``run(duration:)``). `outputs` overrides the
    /// configuration's choice of buzzer, LED and button (tests pass in-memory GPIO parts).
    public init(configuration: DaemonConfiguration, registry: PrometheusCollectorRegistry, logger: Logger,
                start: ProgramStart = .now(), outputs: AlarmOutputs? = nil,
                onReady: @escaping @Sendable () -> Void = {}) throws(DaemonStartError) {
        current = Mutex(configuration)
        self.registry = registry
        self.logger = logger
        self.start = start
        self.onReady = onReady
        let state = configuration.stateDirectory
        // The state directory holds health data and delivery receipts: 0700 and files 0600,
        // started by systemd (UMask=0077) or by hand (`sudo fallguard run` with umask 022).
        umask(0o077)
        // Until the reload service traps it: a SIGHUP right after READY=1 (`monitoring:` is said
        // before that service runs) would otherwise end the process by its default action.
        signal(SIGHUP, SIG_IGN)
        // A state directory that cannot be made or must not be used (another user owns it or
        // may write in it) does not stop the daemon: it monitors and alerts as on a read-only
        // disk (alerts held in memory, sent directly), says why, and tries again every second.
        if let why = StateFiles.prepare(state) {
            logger.critical("state directory not used: \(why); monitoring anyway, alerts are held in memory and sent directly through the channels")
        }
        systemd = try? SystemdNotifier.fromEnvironment()
        let liveness = Liveness()
        self.liveness = liveness
        watchdog = (try? WatchdogPinger.fromEnvironment(liveness: liveness)) ?? nil
        source = try Self.makeSource(configuration)
        let detectorConfiguration: DetectorConfiguration
        do { detectorConfiguration = try configuration.detector.configuration() } catch {
            throw DaemonStartError(description: "detector: \(error)", status: 78)
        }
        let detector = detectorConfiguration.makeDetector()
        if let outputs {
            self.outputs = outputs
        } else {
            do {
                self.outputs = try AlarmOutputs.make(configuration.gpio.enabled ? .gpio : .console,
                                                     gpio: configuration.gpio.wiring, library: configuration.gpio.library,
                                                     button: configuration.alarm.buttonTimings,
                                                     patterns: configuration.alarm.patterns, logger: logger)
            } catch {
                throw DaemonStartError(description: error.description, status: 69)
            }
        }
        let settings = configuration.alarm
        let alert: AlertConfiguration
        incidentPrefix = settings.incidentPrefix
        do throws(AlertConfigurationError) { alert = try settings.alertConfiguration() } catch {
            throw DaemonStartError(description: "alarm: \(AlarmSection.message(for: error))", status: 78)
        }
        do { incidentLog = try IncidentLog(stateDirectory: state) } catch {
            throw DaemonStartError(description: "alarm: \(error)", status: 74)   // EX_IOERR: systemd restarts it
        }
        if let problem = incidentLog.problem {
            logger.critical("\(problem); monitoring anyway, retrying on every incident event (fix: chown fallguard: \(incidentLog.path))")
        }
        // Last of what can fail: a failure after it would drop an HTTP client never shut down.
        notifiers = try Notifiers(configuration: configuration, logger: logger, onDeliveryPass: {
            liveness.pass(Daemon.deliveryWorker, nowNanoseconds: MonotonicClock.nanoseconds())
        })
        alarm = AlarmController(alert: alert, button: settings.buttonTimings, patterns: settings.patterns,
                                buzzer: self.outputs.buzzer, led: self.outputs.led, button: self.outputs.button,
                                sink: notifiers.sink, incidentLog: incidentLog, logger: Logger(label: "fallguard.alarm"))
        alarm.onPass = { liveness.pass(Daemon.alarmThread, nowNanoseconds: MonotonicClock.nanoseconds()) }
        let recording = configuration.recording
        let outbox = notifiers.outbox
        recorder = FieldRecorder(
            stateDirectory: state, recordingFolder: recording.enabled ? recording.folder(stateDirectory: state) : nil,
            keepBytes: recording.keepBytes, flushInterval: recording.flushInterval,
            before: recording.incidentBefore, after: recording.incidentAfter,
            detector: Self.detectorInfo(detectorConfiguration), logger: Logger(label: "fallguard.recorder"),
            deliveries: { id in
                (try? outbox.deliveries(incident: id))?.map {
                    IncidentRecord.Delivery(channel: $0.channel, to: $0.delivery.recipient?.name, state: $0.state.rawValue,
                                            attempts: $0.attempts, error: $0.lastError)
                }
            })
        loop = SensorLoop(source: source, detector: detector)
        let shown = self.outputs.display
        let metrics = self.metrics
        let notifiers = self.notifiers
        let recorder = self.recorder
        let speech = configuration.speech.enabled ? SpokenPrompts(settings: configuration.speech.settings) : nil
        alarm.onUpdate = { engine, effects in
            recorder.record(effects.compactMap { if case let .record(event) = $0 { event } else { nil } })
            speech?.handle(effects)
            shown?.update(engine, effects)
            for effect in effects { if case .dispatch = effect { metrics.alerts.increment() } }
            notifiers.engineChanged(engine, effects)
        }
        let webSection = configuration.web
        if let files = webSection.tls {
            do { tls = try MetricsEndpoint.tls(certificate: files.certificate, key: files.key) } catch {
                throw DaemonStartError(description: "web.tls-certificate / web.tls-key: \(files.certificate), \(files.key): \(error)", status: 78)
            }
        } else {
            tls = nil
        }
        adoptOpenAlarm(lost: dispatchLostFall(), activeTimeout: alert.activeTimeout)
    }

    /// The detector as the incident archive records it: name, every setting, the software.
    static func detectorInfo(_ d: DetectorConfiguration) -> IncidentRecord.DetectorInfo {
        IncidentRecord.DetectorInfo(name: d.name, settings: d.settings.values, software: "fallguard \(fallguardVersion)")
    }

    /// The configuration in force (a reload replaces it).
    public var configuration: DaemonConfiguration { current.withLock { $0 } }

    /// Every part as a service, in start order.
    public var services: [any Service] {
        let c = configuration
        var services: [any Service] = notifiers.services(drainOnStop: c.state.drainOnStop)
        services.append(AcknowledgementService(inbox: notifiers.inbox, progress: notifiers.outbox.progress, alarm: alarm))
        services.append(AlarmService(daemon: self))
        services.append(RecorderService(recorder: recorder))
        services.append(SensorService(daemon: self))
        services.append(StatusService(daemon: self))
        if c.metrics.enabled || c.web.enabled, let address = c.metrics.address {
            services.append(MetricsService(registry: registry, address: (address.host, address.port),
                                           listen: c.metrics.listen, web: c.web.enabled ? makeWebSite(c, host: address.host) : nil,
                                           tls: tls, logger: logger))
        }
        services.append(ReloadService(daemon: self))
        return services
    }

    /// The page, on the server at `metrics.listen`.
    func makeWebSite(_ c: DaemonConfiguration, host: String) -> WebSite {
        let outbox = notifiers.outbox
        let redactor = c.redactor
        return WebSite(access: WebAccess(password: c.web.password, sessionHours: c.web.sessionHours), live: live,
                       loopbackOnly: c.metrics.onLoopback, secure: tls != nil,
                       status: { [self] in pageStatusJSON(currentStatus()) },
                       cachedStatus: { [self] in pageStatus.withLock { $0 } },
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

    /// The status as the page reads it: `status.json`'s fields, the detector's thresholds on
    /// |a| for the live plot, and the last heartbeat message.
    func pageStatusJSON(_ status: DaemonStatus) -> String {
        let thresholds = ((try? configuration.detector.configuration()).map(SignalPlot.thresholds(of:)) ?? [])
            .map { PageStatus.Threshold(name: $0.name, g: $0.g) }
        let heartbeat = (try? notifiers.outbox.deliveries(incident: "heartbeat", newest: 1))?.last.map {
            "\(isoTimestamp(Date(timeIntervalSince1970: $0.createdAt)).prefix(19).replacingOccurrences(of: "T", with: " ")), \($0.state.rawValue)"
        }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = (try? encoder.encode(PageStatus(status: status, thresholds: thresholds, heartbeat: heartbeat))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The sensor: a recording played in real time (demo, field tests) or the IIO device.
    static func makeSource(_ c: DaemonConfiguration) throws(DaemonStartError) -> any SampleSource {
        if c.path == nil, !c.liveDemo {
            let r = BundledRecordings.parse(BundledRecordings.demoFall)
            return ReplaySource(name: "demo: \(BundledRecordings.demoFallName)", recording: r.samples)
        }
        if let replay = c.sensor.replay {
            do {
                let r = try RecordingFile.read(path: replay)
                guard !r.samples.isEmpty else { throw DaemonStartError(description: "sensor.replay: \(replay) has no samples", status: 65) }
                return ReplaySource(name: (replay as NSString).lastPathComponent, recording: r.samples)
            } catch let e as DaemonStartError {
                throw e
            } catch {
                throw DaemonStartError(description: "sensor.replay: \(error)", status: 66)
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

    // MARK: - The sensor thread

    func sensorOutput(_ output: SensorPipeline.Output) {
        switch output {
        case let .opened(info):
            let name = "\(info.id) (\(info.name))"
            deviceName.withLock { $0 = name }
            logger.notice("sensor \(name) at \(info.uri): \(info.mode.rawValue), \(info.samplingFrequency ?? 0) Hz")
        case let .health(change):
            let device = deviceName.withLock { $0 }
            if change.isFault {
                faultsRaised.wrappingIncrement(ordering: .relaxed)
                logger.error("sensor \(device): \(change.problem.rawValue): \(change.detail)")
            } else {
                logger.notice("sensor \(device): \(change.problem.rawValue) ended: \(change.detail)")
            }
            alarm.sensorHealth(change, device: device)
        case let .detection(fall):
            detections.wrappingIncrement(ordering: .relaxed)
            alarm.fallSuspected(fall)
            logger.warning("fall suspected: \(fall.reason)")
        }
    }

    /// What keeps alerts from going out or the record from being kept; empty when all is well.
    public var problems: [String] {
        let stalled = liveness.stalled(nowNanoseconds: MonotonicClock.nanoseconds())
            .map { "\($0.part) has not gone round for \(Int($0.silentSeconds)) s (the watchdog is no longer fed)" }
        return [stateDirectoryProblem].compactMap { $0 } + notifiers.problems + [incidentLog.problem].compactMap { $0 }
            + recorder.problems + stalled
    }

    /// Why the state directory is not used, nil while it is (made again if it went missing).
    var stateDirectoryProblem: String? {
        StateFiles.prepare(configuration.stateDirectory).map { "state directory not used: \($0)" }
    }

    @Sendable func pingWatchdog() {
        do { _ = try watchdog?.tick(nowNanoseconds: MonotonicClock.nanoseconds()) } catch {
            logger.warning("systemd watchdog: \(error)")
        }
    }

    /// The start-up line, `READY=1` to systemd, `ready_ms` in the status file, and `onReady`.
    func announceReady() {
        let c = configuration
        // From exec, unless this process ran something heavy before the command (`swift run`
        // builds, then execs the program in the same process): then from the command's start.
        let ready: (ms: Int, since: String)
        if start.usage.cpuSeconds < 0.5, let sinceExec = ProcessUsage.secondsSinceStart() {
            ready = (Int(sinceExec * 1000), "exec")
        } else {
            ready = (Int(start.seconds * 1000), "the command started (this process ran \(String(format: "%.1f", start.usage.cpuSeconds)) s of CPU before it)")
        }
        readyMilliseconds.withLock { $0 = ready.ms }
        logger.notice("monitoring: \(source is ReplaySource ? "replay" : "sensor") → \(c.detector.name) → alarm (\(c.gpio.enabled ? "GPIO" : "console")) → \(notifiers.summary); configuration \(c.label); state \(c.stateDirectory); ready \(ready.ms) ms after \(ready.since)")
        if let why = RealTimePriority.refusal {
            logger.warning("the alarm's threads run without real-time priority (SCHED_FIFO 10: \(why)); buzzer timing may suffer on a loaded machine. Under systemd: LimitRTPRIO=10, RestrictRealtime=no, sched_setscheduler allowed (deploy/fallguard.service)")
        }
        try? systemd?.ready(status: "monitoring")
        onReady()
    }

    private let readyMilliseconds = Mutex<Int?>(nil)
    /// Whether the storage problem now going on was sent as a device-problem alert.
    private let storageAlerted = Mutex(false)

    /// Why the daemon cannot store alerts (its state directory not used, the outbox not open),
    /// nil while it can.
    var storageProblem: String? { stateDirectoryProblem ?? notifiers.outbox.unavailable }

    /// Once per episode (status service): a storage problem goes to the helpers as a
    /// device-problem alert (through the hand-off: sent directly while the outbox cannot take it).
    private func alertStorageProblem() {
        let problem = storageProblem
        let send = storageAlerted.withLock { sent -> Bool in
            defer { sent = problem != nil }
            return problem != nil && !sent
        }
        guard send, let problem else { return }
        let alert = Alert(kind: .deviceProblem, incident: "\(incidentPrefix)-storage-\(Int(Date().timeIntervalSince1970))",
                          time: MonotonicClock.seconds(),
                          sensorFault: SensorFault(.storage, device: "state directory \(configuration.stateDirectory)", detail: problem))
        logger.critical("\(alert.incident): the state directory cannot store alerts; the helpers are told (device-problem alert)")
        do { try notifiers.sink.deliver(alert) } catch {
            logger.critical("\(alert.incident): the device-problem alert could not be handed over: \(error)")
        }
    }
    private let statusWriteFailure = Mutex<String?>(nil)

    /// status.json could not be written: logged when the reason changes, not every second.
    private func statusWriteFailed(_ why: String) {
        let changed = statusWriteFailure.withLock { last in defer { last = why }; return last != why }
        if changed { logger.error("status: cannot write \(why) (said once while it lasts)") }
    }
    private let reportedProblems = Mutex<[String]>([])

    /// Logs each problem when it begins and when it ends (status service, once a second).
    private func reportProblemChanges(_ now: [String]) {
        let before = reportedProblems.withLock { old in defer { old = now }; return old }
        for p in now where !before.contains(p) { logger.critical("UNHEALTHY: \(p)") }
        for p in before where !now.contains(p) { logger.notice("resolved: \(p)") }
        if before.isEmpty != now.isEmpty { try? systemd?.status(now.first.map { "UNHEALTHY: \($0)" } ?? "monitoring") }
    }

    /// A countdown cut short by a shutdown was not aborted by anyone: the wearer may be on the
    /// floor, and nothing would tell anyone after the restart. The fall alert goes out now
    /// (into the durable outbox, delivered by the next start if not by this one).
    func dispatchInterruptedCountdown() {
        guard case let .countdown(c) = alarm.snapshot.state else { return }
        logger.critical("\(c.incident): shutting down during the countdown; the fall alert goes out now")
        let alert = c.fallAlert(at: MonotonicClock.seconds())
        do { try notifiers.sink.deliver(alert) } catch {
            logger.critical("\(c.incident): the fall alert could NOT be handed to the notifiers: \(error)")
        }
    }

    /// At start: the fall a crash lost between the incident log and the outbox goes out, and
    /// the log says so (see ``InterruptedIncident``). Returns it.
    private func dispatchLostFall() -> Alert? {
        guard let lost = InterruptedIncident.find(inLog: incidentLog.lines(), now: Date().timeIntervalSince1970),
              (try? notifiers.outbox.knows(incident: lost.incident)) != true else { return nil }
        logger.critical("\(lost.incident): the last process ended during the countdown before its alert was stored; the fall alert goes out now")
        let time = MonotonicClock.seconds()
        let alert = Alert(kind: .fall, incident: lost.incident, time: time, fall: lost.fall)
        try? notifiers.sink.deliver(alert)
        try? incidentLog.append(IncidentEvent(time: time, incident: lost.incident, event: .countdownExpired,
                                              detail: "sent at start: the last process ended during the countdown", alert: .fall,
                                              fall: lost.fall))
        return alert
    }

    /// At start: the alarm a previous process left out (the `lost` fall, else the newest
    /// unacknowledged one in the outbox younger than the engine's `activeTimeout`) becomes the
    /// alarm's active alert: it sounds, and an acknowledgement or the wearer's press ends it
    /// and its escalation.
    private func adoptOpenAlarm(lost: Alert?, activeTimeout: Double) {
        let since = Date().timeIntervalSince1970 - activeTimeout
        guard let open = lost ?? (try? notifiers.outbox.openAlarm(since: since)) ?? nil else { return }
        logger.critical("\(open.incident): the \(open.kind.rawValue) alert of a previous run is still out; the alarm takes it over")
        alarm.resume(open)
    }

    /// SIGHUP: the detector and the notifiers (contacts, wearer, templates, policy, channels
    /// other than MQTT) take the new file at once; parts that own hardware, connections or the
    /// incident in progress (sensor, gpio, alarm, state, recording, metrics, log, MQTT channels) need a
    /// restart, and the log says which changed. A file with errors changes nothing.
    public func reload() {
        let configuration = self.configuration
        guard let path = configuration.path else {
            logger.notice("SIGHUP: the embedded demo has no file to reload")
            return
        }
        try? systemd?.reloading()
        defer { try? systemd?.ready(status: "monitoring") }
        let (new, diagnostics) = DaemonConfiguration.load(path: path)
        for d in diagnostics { logger.warning("\(new.redactor.redact(d.description))") }
        guard !diagnostics.contains(where: \.isError) else {
            logger.error("SIGHUP: \(path) has errors; still running with the configuration loaded before")
            return
        }
        if new.detector != configuration.detector, let d = try? new.detector.configuration() {
            loop.replaceDetector(d.makeDetector())
            recorder.detectorChanged(Self.detectorInfo(d))
            logger.notice("detector now \(d.label)")
        }
        var restart: [String] = []
        if new.sensor != configuration.sensor { restart.append("sensor") }
        if new.gpio != configuration.gpio { restart.append("gpio") }
        if new.alarm != configuration.alarm { restart.append("alarm") }
        if new.state != configuration.state { restart.append("state") }
        if new.recording != configuration.recording { restart.append("recording") }
        if new.speech != configuration.speech { restart.append("speech") }
        if new.metrics != configuration.metrics { restart.append("metrics") }
        if new.log != configuration.log { restart.append("log") }
        var applied = new.detector != configuration.detector ? ["detector"] : []
        switch notifiers.reload(new) {
        case .unchanged: break
        case let .applied(parts): applied += parts.map { "notifiers (\($0))" }
        case let .needsRestart(why): restart.append("notifiers (\(why))")
        }
        current.withLock { $0 = new }
        logger.notice("SIGHUP: reloaded \(path)\(applied.isEmpty ? "" : "; now in effect: \(applied.joined(separator: ", "))")\(restart.isEmpty ? "" : "; changes to \(restart.joined(separator: ", ")) take effect after a restart")")
    }

    /// The status as `status.json` has it, now.
    func currentStatus() -> DaemonStatus {
        currentStatus(engine: alarm.snapshot, sensor: loop.sensor, samples: loop.rawSamples.load(ordering: .relaxed))
    }

    /// The status from snapshots already taken (the status service's gauges describe the same moment).
    func currentStatus(engine: AlertEngine, sensor: SensorLoop.SensorState, samples: Int) -> DaemonStatus {
        let configuration = self.configuration
        var remaining: Double?
        if case let .countdown(c) = engine.state { remaining = c.remaining(at: MonotonicClock.seconds()) }
        return DaemonStatus(
            pid: getpid(), version: fallguardVersion, started: isoTimestamp(started), updated: isoTimestamp(),
            readyMs: readyMilliseconds.withLock { $0 },
            state: engine.status.rawValue, incident: engine.state.incident, countdownRemaining: remaining,
            sensor: sensor.info.map {
                .init(device: "\($0.id) (\($0.name))", uri: $0.uri, mode: $0.mode.rawValue, rate: $0.samplingFrequency ?? 0,
                      problems: sensor.problems.map(\.rawValue), samples: samples, overruns: sensor.overruns)
            },
            lastIncident: notifiers.lastIncident, outbox: notifiers.outboxStatus(), configuration: configuration.label,
            problems: problems, gpio: outputs.library?.description, recording: recorder.status)
    }

    /// Writes `<state>/status.json` and refreshes the gauges (status service only).
    func publishStatus(samplesCounted: inout Int) {
        let configuration = self.configuration
        let engine = alarm.snapshot
        let sensor = loop.sensor
        let status = engine.status
        let total = loop.rawSamples.load(ordering: .relaxed)
        let file = currentStatus(engine: engine, sensor: sensor, samples: total)
        let outbox = file.outbox
        let usage = ProcessUsage.current()
        if live.viewers > 0 {   // a new status for open pages only when something they show changed
            var shown = file
            (shown.updated, shown.recording) = ("", nil)
            shown.sensor?.samples = 0
            let changed = pageStatusShown.withLock { last in defer { last = shown }; return last != shown }
            if changed {
                let json = pageStatusJSON(file)
                pageStatus.withLock { p in p = ((p?.version ?? 0) + 1, json) }
            }
        }
        if StateFiles.distrust(of: configuration.stateDirectory) == nil {   // else a problem says why
            do {
                try file.write(to: configuration.stateDirectory)
                statusWriteFailure.withLock { $0 = nil }
            } catch {
                statusWriteFailed("\(error)")
            }
        }
        metrics.samples.increment(by: Int64(total - samplesCounted))
        samplesCounted = total
        metrics.overruns.record(sensor.overruns)
        metrics.rate.record(sensor.info?.samplingFrequency ?? 0)
        metrics.sensorHealthy.record(sensor.info != nil && sensor.problems.isEmpty ? 1 : 0)
        metrics.sensorFaults.increment(by: Int64(faultsRaised.exchange(0, ordering: .relaxed)))
        metrics.fallsSuspected.increment(by: Int64(detections.exchange(0, ordering: .relaxed)))
        metrics.state.record(status.gaugeValue)
        let active: AlertState.Active? = if case let .alertActive(a) = engine.state { a } else { nil }
        metrics.alertDelivered.record(active?.delivered == true ? 1 : 0)
        metrics.alertReached.record(active?.reachedBy != nil ? 1 : 0)
        if let o = outbox {
            metrics.outboxPending.record(o.pending)
            metrics.outboxSent.record(o.sent)
            metrics.outboxFailed.record(o.failed)
            metrics.outboxOldestPendingAge.record(o.oldestPendingAge ?? 0)
        }
        metrics.healthy.record(file.problems?.isEmpty == false ? 0 : 1)
        metrics.outboxHeldInMemory.record(notifiers.handOff.heldCount)
        if let o = outbox { metrics.outboxQuarantined.record(o.quarantined ?? 0) }
        alarm.deliveryTrouble(file.problems?.isEmpty == false)
        reportProblemChanges(file.problems ?? [])
        alertStorageProblem()
        metrics.cpuSeconds.record(usage.cpuSeconds)
        metrics.residentBytes.record(usage.maxResidentKiB * 1024)
    }
}
