import AsyncHTTPClient
import FallGuardCore
import FallGuardHardware
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals

// The daemon's parts as services of one ServiceGroup: each runs until the group's graceful
// shutdown (SIGTERM, SIGINT, `--duration`) and then stops what it owns.

/// The sensor's consumer thread: detections and health changes to the alarm, the watchdog
/// pinged on every pass. Reports readiness once it runs.
struct SensorService: Service {
    let daemon: Daemon

    func run() async throws {
        let d = daemon
        d.loop.start(logger: d.logger, afterPass: d.pingWatchdog) { output in d.sensorOutput(output) }
        d.announceReady()
        try? await gracefulShutdown()
        try? d.systemd?.stopping()
        d.loop.stopAndWait()
    }
}

/// The alarm thread with its buzzer, LED and button (and the console display in the demo).
/// At shutdown a countdown in progress sends its fall alert: nobody aborted it.
struct AlarmService: Service {
    let daemon: Daemon

    func run() async throws {
        let d = daemon
        d.alarm.start()
        d.outputs.display?.start(d.alarm)
        try? await gracefulShutdown()
        d.outputs.display?.stop()
        d.alarm.stop()
        d.dispatchInterruptedCountdown()
    }
}

/// Acknowledgements from every channel, in arrival order, to the alarm.
struct AcknowledgementService: Service {
    let inbox: AcknowledgementInbox
    let alarm: AlarmController

    func run() async throws {
        for await ack in inbox.acknowledgements.cancelOnGracefulShutdown() {
            alarm.acknowledge(incident: ack.incident, by: ack.by)
        }
    }
}

/// `<state>/status.json` and the gauges, once a second.
struct StatusService: Service {
    let daemon: Daemon

    func run() async throws {
        var counted = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            daemon.publishStatus(samplesCounted: &counted)
            try? await Task.sleep(for: .seconds(1))
        }
        daemon.publishStatus(samplesCounted: &counted)
    }
}

/// `GET /metrics` on the `metrics.listen` address. A convenience: when it cannot run, the
/// alarm goes on without it.
struct MetricsService: Service {
    let registry: PrometheusCollectorRegistry
    let address: (host: String, port: Int)
    let listen: String
    let logger: Logger

    func run() async throws {
        let app = MetricsEndpoint.application(registry: registry, host: address.host, port: address.port,
                                              logger: Logger(label: "fallguard.metrics"))
        do { try await app.run() } catch {
            logger.error("metrics endpoint \(listen): \(error)")
            try? await gracefulShutdown()
        }
    }
}

/// SIGHUP: reloads the configuration (see ``Daemon/reload()``).
struct ReloadService: Service {
    let daemon: Daemon

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() { daemon.reload() }
    }
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

/// The delivery worker: pending deliveries of an earlier run resume at once. Cancelled on
/// graceful shutdown; pending deliveries stay in the outbox for the next start.
struct DeliveryService: Service {
    let worker: DeliveryWorker
    let client: HTTPClient

    func run() async throws {
        await cancelWhenGracefulShutdown { await worker.run() }
        try? await client.shutdown()
    }
}

/// The daily heartbeat (`policy.heartbeat`), through the outbox.
struct HeartbeatService: Service {
    let notifiers: Notifiers
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while let next = notifiers.settings.policy.nextHeartbeat(after: Date()) {
                do { try await Task.sleep(for: .seconds(max(1, next.timeIntervalSinceNow))) } catch { return }
                do { try notifiers.outbox.enqueueHeartbeat() } catch { logger.error("heartbeat: \(error)") }
            }
        }
    }
}
