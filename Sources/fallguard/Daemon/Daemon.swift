import FallGuardConfig
import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware
import FallGuardSystemd
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals

/// Why the daemon could not start, with the exit status for it (sysexits.h).
struct DaemonStartError: Error, CustomStringConvertible {
    var description: String
    var status: Int32
}

/// `fallguard run`: sensor → ring buffer → detector → alert engine → buzzer / LED / button →
/// outbox → notifiers, each part a service in one ServiceGroup. SIGTERM and SIGINT shut down
/// gracefully (the alarm silenced, pending deliveries left in the outbox for the next start);
/// SIGHUP reloads the configuration without touching an incident in progress.
final class Daemon: @unchecked Sendable {
    // @unchecked: the mutable `configuration` is touched only by the reload service's task.
    private(set) var configuration: DaemonConfiguration
    let logger: Logger
    let source: any SampleSource
    let loop: SampleLoop
    let alarm: AlarmController
    let display: ConsoleAlarmDisplay?
    /// `libgpiod 2.1.3 (libgpiod.so.3, uAPI v2)`; nil without GPIO.
    let gpioLibrary: String?
    let notifiers: Notifiers
    let systemd: SystemdNotifier?
    let metrics = DaemonMetrics()
    let registry: PrometheusCollectorRegistry
    let started = Date()
    let duration: Double?
    let onReady: @Sendable () -> Void
    /// Samples already added to the metrics counter (status task only).
    private var samplesCounted = 0

    init(configuration: DaemonConfiguration, registry: PrometheusCollectorRegistry, duration: Double?,
         logger: Logger, onReady: @escaping @Sendable () -> Void = {}) throws(DaemonStartError) {
        self.configuration = configuration
        self.registry = registry
        self.duration = duration
        self.logger = logger
        self.onReady = onReady
        let state = configuration.stateDirectory
        do {
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw DaemonStartError(description: "state.directory: cannot create \(state): \(error.localizedDescription)", status: 73)
        }
        systemd = try? SystemdNotifier.fromEnvironment()
        source = try Self.makeSource(configuration)
        let detector: any FallDetector
        do { detector = try configuration.detector.configuration().makeDetector() } catch {
            throw DaemonStartError(description: "detector: \(error)", status: 78)
        }
        notifiers = try Notifiers(configuration: configuration, logger: logger)
        // The alarm's outputs: GPIO lines, or the console for the demo and benches.
        let buzzer: PatternPlayer?, led: PatternPlayer?, button: (any ButtonSource)?
        if configuration.gpio.enabled {
            do {
                let parts = try GPIOAlarmParts(gpio: configuration.gpio, settings: configuration.alarm)
                (buzzer, led, button) = (parts.buzzer, parts.led, parts.button)
                gpioLibrary = parts.library?.description
                logger.notice("gpio: \(parts.library?.description ?? "unknown library") (gpio.library: \(configuration.gpio.library.rawValue)), chip \(configuration.gpio.chip)")
            } catch {
                throw DaemonStartError(description: error.description, status: 69)
            }
            display = nil
        } else {
            let d = ConsoleAlarmDisplay(settings: configuration.alarm)
            display = d
            gpioLibrary = nil
            let keys = ConsoleButton(longPress: configuration.alarm.longPress)
            if !keys.isAvailable { logger.notice("standard input is not a terminal: no console button") }
            (buzzer, led, button) = (PatternPlayer(name: "buzzer", output: d.buzzer), PatternPlayer(name: "led", output: d.led), keys)
        }
        do {
            alarm = try AlarmController(settings: configuration.alarm, buzzer: buzzer, led: led, button: button,
                                        sink: notifiers.sink, incidentLog: IncidentLog(stateDirectory: state),
                                        logger: Logger(label: "fallguard.alarm"))
        } catch {
            throw DaemonStartError(description: "alarm: \(error)", status: 78)
        }
        let watchdog = try? WatchdogPinger.fromEnvironment()
        loop = SampleLoop(source: source, detector: detector, alarm: alarm, watchdog: watchdog ?? nil,
                          logger: Logger(label: "fallguard.sensor"))
        let controller = alarm
        notifiers.onAcknowledgement { incident, by in controller.acknowledge(incident: incident, by: by) }
        let shown = display
        let metrics = self.metrics
        let notifiers = self.notifiers
        alarm.onUpdate = { engine, effects in
            shown?.update(engine, effects)
            for effect in effects { if case .dispatch = effect { metrics.alerts.increment() } }
            notifiers.engineChanged(engine, effects)
        }
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

    /// Runs every service until SIGTERM / SIGINT (or `duration`); returns the exit status.
    func run() async throws {
        var services: [any Service] = notifiers.services
        services.append(ClosureService("alarm") { [self] in
            alarm.start()
            display?.start(alarm)
            try? await gracefulShutdown()
            display?.stop()
            alarm.stop()
            dispatchInterruptedCountdown()
        })
        services.append(ClosureService("sensor") { [self] in
            loop.start()
            let ms = Int((ProcessUsage.secondsSinceStart() ?? Date().timeIntervalSince(started)) * 1000)
            logger.notice("monitoring: \(source is ReplaySource ? "replay" : "sensor") → \(configuration.detector.name) → alarm (\(configuration.gpio.enabled ? "GPIO" : "console")) → \(notifiers.summary); configuration \(configuration.label); state \(configuration.stateDirectory); ready \(ms) ms after start")
            try? systemd?.ready(status: "monitoring")
            onReady()
            try? await gracefulShutdown()
            try? systemd?.stopping()
            loop.stopAndWait()
        })
        services.append(ClosureService("status") { [self] in
            while !Task.isShuttingDownGracefully {
                publishStatus()
                try? await Task.sleep(for: .seconds(1))
            }
            publishStatus()
        })
        if configuration.metrics.enabled, let address = configuration.metrics.address {
            let app = MetricsEndpoint.application(registry: registry, host: address.host, port: address.port,
                                                  logger: Logger(label: "fallguard.metrics"))
            services.append(ClosureService("metrics") { [self] in
                do { try await app.run() } catch {
                    // Metrics are a convenience: the alarm goes on without them.
                    logger.error("metrics endpoint \(configuration.metrics.listen): \(error)")
                    try? await gracefulShutdown()
                }
            })
        }
        services.append(ClosureService("reload") { [self] in
            for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() { reload() }
        })
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
        let uptime = Date().timeIntervalSince(started)
        logger.notice("stopped after \(String(format: "%.1f", uptime)) s: CPU \(String(format: "%.3f", usage.cpuSeconds)) s (\(String(format: "%.3f", 100 * usage.cpuSeconds / max(uptime, 1e-9))) % of one core), max RSS \(usage.maxResidentKiB) KiB")
    }

    /// A countdown cut short by a shutdown was not aborted by anyone: the wearer may be on the
    /// floor, and nothing would tell anyone after the restart. The fall alert goes out now
    /// (into the durable outbox, delivered by the next start if not by this one).
    func dispatchInterruptedCountdown() {
        guard case let .countdown(c) = alarm.snapshot.state else { return }
        logger.critical("\(c.incident): shutting down during the countdown; the fall alert goes out now")
        let alert = c.fallAlert(at: Double(monotonicNanoseconds()) * 1e-9)
        do { try notifiers.sink.deliver(alert) } catch {
            logger.critical("\(c.incident): the fall alert could NOT be handed to the notifiers: \(error)")
        }
    }

    /// SIGHUP: the detector and the notifiers (contacts, wearer, templates, policy, channels
    /// other than MQTT) take the new file at once; parts that own hardware, connections or the
    /// incident in progress (sensor, gpio, alarm, state, metrics, log, MQTT channels) need a
    /// restart, and the log says which changed. A file with errors changes nothing.
    func reload() {
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
            loop.replaceDetector(d.makeDetector(), label: d.label)
        }
        var restart: [String] = []
        if new.sensor != configuration.sensor { restart.append("sensor") }
        if new.gpio != configuration.gpio { restart.append("gpio") }
        if new.alarm != configuration.alarm { restart.append("alarm") }
        if new.state != configuration.state { restart.append("state") }
        if new.metrics != configuration.metrics { restart.append("metrics") }
        if new.log != configuration.log { restart.append("log") }
        var applied = new.detector != configuration.detector ? ["detector"] : []
        switch notifiers.reload(new) {
        case .unchanged: break
        case let .applied(parts): applied += parts.map { "notifiers (\($0))" }
        case let .needsRestart(why): restart.append("notifiers (\(why))")
        }
        configuration = new
        logger.notice("SIGHUP: reloaded \(path)\(applied.isEmpty ? "" : "; now in effect: \(applied.joined(separator: ", "))")\(restart.isEmpty ? "" : "; changes to \(restart.joined(separator: ", ")) take effect after a restart")")
    }

    /// Writes `<state>/status.json` and refreshes the gauges.
    func publishStatus() {
        let engine = alarm.snapshot
        let sensor = loop.sensor
        let stateName: String
        var remaining: Double?
        switch engine.state {
        case .monitoring: stateName = engine.sensorFault == nil ? "monitoring" : "sensor-fault"
        case let .countdown(c):
            stateName = "countdown"
            remaining = c.remaining(at: Double(monotonicNanoseconds()) * 1e-9)
        case .alertActive: stateName = "alert-out"
        }
        let outbox = notifiers.outboxStatus()
        let usage = ProcessUsage.current()
        let status = DaemonStatus(
            pid: getpid(), version: fallguardVersion, started: isoTimestamp(started), updated: isoTimestamp(),
            state: stateName, incident: engine.state.incident, countdownRemaining: remaining,
            sensor: sensor.info.map {
                .init(device: "\($0.id) (\($0.name))", uri: $0.uri, mode: $0.mode.rawValue, rate: $0.samplingFrequency ?? 0,
                      problems: sensor.problems.map(\.rawValue), samples: loop.rawSamples.load(ordering: .relaxed),
                      overruns: sensor.overruns)
            },
            lastIncident: notifiers.lastIncident, outbox: outbox, configuration: configuration.label, gpio: gpioLibrary)
        do { try status.write(to: configuration.stateDirectory) } catch {
            logger.error("status: cannot write \(DaemonStatus.path(in: configuration.stateDirectory)): \(error.localizedDescription)")
        }
        let total = loop.rawSamples.load(ordering: .relaxed)
        metrics.samples.increment(by: Int64(total - samplesCounted))
        samplesCounted = total
        metrics.overruns.record(sensor.overruns)
        metrics.rate.record(sensor.info?.samplingFrequency ?? 0)
        metrics.sensorHealthy.record(sensor.info != nil && sensor.problems.isEmpty ? 1 : 0)
        metrics.sensorFaults.increment(by: Int64(loop.faultsRaised.exchange(0, ordering: .relaxed)))
        metrics.fallsSuspected.increment(by: Int64(loop.detections.exchange(0, ordering: .relaxed)))
        metrics.state.record(stateName == "countdown" ? 1 : stateName == "alert-out" ? 2 : 0)
        if let o = outbox {
            metrics.outboxPending.record(o.pending)
            metrics.outboxSent.record(o.sent)
            metrics.outboxFailed.record(o.failed)
            metrics.outboxOldestPendingAge.record(o.oldestPendingAge ?? 0)
        }
        metrics.cpuSeconds.record(usage.cpuSeconds)
        metrics.residentBytes.record(usage.maxResidentKiB * 1024)
    }
}

/// A service made of one async closure.
struct ClosureService: Service {
    let name: String
    let body: @Sendable () async throws -> Void
    init(_ name: String, _ body: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.body = body
    }
    func run() async throws { try await body() }
}

let fallguardVersion = "0.4.0"
