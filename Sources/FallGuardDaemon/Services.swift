import AsyncHTTPClient
import FallGuardCore
import FallGuardHardware
import FallGuardMQTT
import FallGuardNotify
import FallGuardSystemd
import Foundation
import Hummingbird
import Logging
import NIOSSL
import FallGuardWeb
import Prometheus
import ServiceLifecycle
import Synchronization
import UnixSignals

// The daemon's parts as services of one ServiceGroup: each runs until the group's graceful
// shutdown (SIGTERM, SIGINT, `--duration`) and then stops what it owns.

/// The sensor thread (capture, then the pipeline): detections and health changes to the
/// alarm, every 40 Hz sample to the wear watch (walking, not worn), the recorder and the open
/// pages, the watchdog pinged on every pass. Reports readiness once it runs.
struct SensorService: Service {
    let loop: SensorLoop
    // Where each sample goes.
    let router: SensorRouter, wear: WearWatch, recorder: FieldRecorder, live: LiveSignal
    let watchdog: WatchdogPinger?, readiness: Readiness, systemd: SystemdNotifier?, logger: Logger

    func run() async throws {
        let (recorder, live, router, wear, watchdog, logger) = (recorder, live, router, wear, watchdog, logger)
        loop.start(logger: logger, afterPass: {
            do { _ = try watchdog?.tick(nowNanoseconds: MonotonicClock.nanoseconds()) } catch {
                logger.warning("systemd watchdog: \(error)")
            }
        }, onSample: { sample in
            wear.process(sample)
            recorder.tap(sample)
            live.offer(sample, monotonicNow: MonotonicClock.seconds(), wallNow: Date().timeIntervalSince1970)
        }, { output in
            if case let .detection(fall) = output { wear.fallDetected(fall) }   // before the alarm hears of it
            router.route(output)
        })
        readiness.announce()
        try? await gracefulShutdown()
        try? systemd?.stopping()
        loop.stopAndWait()
    }
}

/// What the sensor pipeline says, to the alarm, the log and the gauges (sensor thread).
final class SensorRouter: Sendable {
    let alarm: AlarmController
    let counters: SensorCounters
    let logger: Logger
    /// The device name the pipeline reports problems under.
    private let deviceName = Mutex("sensor")

    init(alarm: AlarmController, counters: SensorCounters, logger: Logger) {
        (self.alarm, self.counters, self.logger) = (alarm, counters, logger)
    }

    @Sendable func route(_ output: SensorPipeline.Output) {
        switch output {
        case let .opened(info):
            let name = "\(info.id) (\(info.name))"
            deviceName.withLock { $0 = name }
            logger.notice("sensor \(name) at \(info.uri): \(info.mode.rawValue), \(info.samplingFrequency ?? 0) Hz, \(info.axes)")
        case let .health(change):
            let device = deviceName.withLock { $0 }
            if change.isFault {
                counters.faultsRaised.wrappingIncrement(ordering: .relaxed)
                logger.error("sensor \(device): \(change.problem.rawValue): \(change.detail)")
            } else {
                logger.notice("sensor \(device): \(change.problem.rawValue) ended: \(change.detail)")
            }
            alarm.sensorHealth(change, device: device)
        case let .detection(fall):
            counters.detections.wrappingIncrement(ordering: .relaxed)
            alarm.fallSuspected(fall)
            logger.warning("fall suspected: \(fall.reason)")
        }
    }
}

/// The field-test recorder's thread: the incident archive and the continuous recording. It
/// stops after the sensor (services stop in reverse order), writing what it holds.
struct RecorderService: Service {
    let recorder: FieldRecorder

    func run() async throws {
        recorder.start()
        try? await gracefulShutdown()
        recorder.stopAndWait()
    }
}

/// The alarm thread with its buzzer, LED and button (and the console display in the demo),
/// watched by the systemd watchdog. At shutdown a countdown in progress sends its fall alert:
/// nobody aborted it (the delivery service stops after this one and drains it).
struct AlarmService: Service {
    let alarm: LocalAlarm
    let liveness: Liveness
    let recovery: StartupRecovery

    func run() async throws {
        alarm.start()
        try? await gracefulShutdown()
        liveness.forget(Daemon.alarmThread)
        alarm.stop()
        recovery.dispatchInterruptedCountdown()
    }
}

/// Acknowledgements from every channel, in arrival order, to the alarm: the wearer hears
/// that help is coming.
struct AcknowledgementService: Service {
    let inbox: AcknowledgementInbox
    let alarm: AlarmController

    func run() async throws {
        for await ack in inbox.acknowledgements.cancelOnGracefulShutdown() {
            if let step = ack.step {
                alarm.stationStep(step, incident: ack.incident, by: ack.byAndVia)
            } else {
                alarm.acknowledge(incident: ack.incident, by: ack.byAndVia)
            }
        }
    }
}

/// What became of the alarm's messages (sent, failed, a person reached or not), as the
/// outbox reports it: the one route by which delivery progress reaches the alarm (the wearer
/// hears that a message went out, that someone answered), the MQTT state and status (the
/// last incident's `delivered` and `reached_by`) and the incident archive (the record's
/// deliveries, written again at once).
struct ProgressService: Service {
    let progress: AsyncStream<DeliveryProgress>
    let alarm: AlarmController
    /// The status's and MQTT's last incident (``Notifiers/progressed(_:)``).
    let progressed: @Sendable (DeliveryProgress) -> Void
    let recorder: FieldRecorder

    func run() async throws {
        for await p in progress.cancelOnGracefulShutdown() {
            switch p {
            case let .delivered(incident, _, _): alarm.delivered(incident: incident)
            case let .reached(incident, _, contact): alarm.reached(incident: incident, by: contact)
            case .notReached, .reply, .failed: break
            }
            progressed(p)
            recorder.deliveriesChanged(incident: p.incident)
        }
    }
}

/// The daemon's problems, checked once a second (see ``DaemonHealth``): the LED's fault
/// pattern, the log, systemd's status and the storage alert follow them.
struct HealthService: Service {
    let health: DaemonHealth

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            health.check()
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// `<state>/status.json` and the gauges, once a second.
struct StatusService: Service {
    let publisher: StatusPublisher

    func run() async throws {
        var counted = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            publisher.publish(samplesCounted: &counted)
            try? await Task.sleep(for: .seconds(1))
        }
        publisher.publish(samplesCounted: &counted)
    }
}

/// Call outcomes and SMS replies from the provider while an alarm is open.
struct FollowUpService: Service {
    let followUp: CaregiverFollowUp

    func run() async throws {
        await cancelWhenGracefulShutdown { await followUp.run() }
    }
}

/// `GET /metrics` on the `metrics.listen` address. A convenience: when it cannot run, the
/// alarm goes on without it.
struct MetricsService: Service {
    let registry: PrometheusCollectorRegistry
    let address: (host: String, port: Int)
    let listen: String
    let web: WebSite?
    let tls: TLSConfiguration?
    let logger: Logger

    func run() async throws {
        do {
            let app = try MetricsEndpoint.application(registry: registry, host: address.host, port: address.port,
                                                      logger: Logger(label: "fallguard.metrics"), web: web, tls: tls)
            try await app.run()
        } catch {
            logger.error("metrics endpoint \(listen): \(error)")
            try? await gracefulShutdown()
        }
    }
}

/// SIGHUP: reloads the configuration (see ``ConfigurationReload``), a SIGHUP that arrived
/// before this service trapped it (``EarlyHangup``) included.
struct ReloadService: Service {
    let reload: ConfigurationReload

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        if EarlyHangup.take() { reload.reload() }
        for await _ in signals.cancelOnGracefulShutdown() { reload.reload() }
    }
}

/// A SIGHUP between the daemon's start and the reload service's trap (`READY=1` is sent before
/// that service runs, so `systemctl reload` right after start lands there): remembered, not lost
/// and not the default action (which ends the process), and applied when the service starts.
public enum EarlyHangup {
    private static let pending = Atomic<Bool>(false)

    /// From now until ``ReloadService`` traps SIGHUP, a SIGHUP is remembered.
    public static func catchUntilTrapped() {
        signal(SIGHUP) { _ in EarlyHangup.pending.store(true, ordering: .relaxed) }   // async-signal-safe: one atomic store
    }

    /// Whether a SIGHUP came since ``catchUntilTrapped()``; forgets it.
    public static func take() -> Bool { pending.exchange(false, ordering: .relaxed) }
}

/// The MQTT connections (alerts, state, discovery, acknowledgements).
struct MQTTBridgeService: Service {
    let channels: [MQTTChannel]

    func run() async throws {
        channels.forEach { $0.start() }
        try? await gracefulShutdown()
        for m in channels { await m.stop() }
    }
}

/// The delivery worker and the hand-off's retries, watched by the systemd watchdog: pending
/// deliveries of an earlier run resume at once. On graceful shutdown (the services after this
/// one, the alarm among them, have stopped by then) both go on until nothing is pending or
/// held, for at most `drain` seconds; what is left stays in the outbox for the next start.
struct DeliveryService: Service {
    let worker: DeliveryWorker
    let handOff: OutboxHandOff
    let client: HTTPClient
    let drain: Double
    let logger: Logger

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await worker.run() }
            group.addTask { await handOff.run(sendingThrough: worker) }
            do { try await gracefulShutdown() } catch {
                group.cancelAll()   // cancelled, not a graceful stop: no drain
                return
            }
            let start = ContinuousClock.now
            let drained = await until(drain) { await !worker.hasWork && handOff.heldCount == 0 }
            let elapsed = ContinuousClock.now - start
            let took = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            if drained {
                logger.notice("stopping: nothing pending in the outbox (drained in \(String(format: "%.1f", took)) s)")
            } else {
                logger.warning("stopping after \(drain) s with alerts pending; the next start sends them (\((try? worker.outbox.metrics())?.description ?? "outbox unreadable"), \(handOff.heldCount) held in memory)")
            }
            group.cancelAll()
        }
        try? await client.shutdown()
    }

    /// Polls `condition` every 100 ms for at most `seconds`; whether it held.
    private func until(_ seconds: Double, _ condition: () async -> Bool) async -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while await !condition() {
            guard ContinuousClock.now < end else { return false }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return true
    }
}

/// The daily heartbeat (`policy.heartbeat`), through the outbox.
struct HeartbeatService: Service {
    let outbox: Outbox
    let logger: Logger

    func run() async throws {
        // Looks at the wall clock at least every 30 s rather than sleeping until the time it
        // read once: a step of the clock (NTP setting a Pi's time days later, or back an
        // hour) moves the heartbeat with the time of day, once per local day (HeartbeatSchedule).
        await cancelWhenGracefulShutdown {
            var schedule = HeartbeatSchedule(policy: outbox.settings.policy)
            while let look = schedule.look(at: Date()) {
                if look.send {
                    do { try outbox.enqueueHeartbeat() } catch { logger.error("heartbeat: \(error)") }
                }
                do { try await Task.sleep(for: .seconds(look.sleep)) } catch { return }
                schedule = HeartbeatSchedule(policy: outbox.settings.policy, keeping: schedule)
            }
        }
    }
}
