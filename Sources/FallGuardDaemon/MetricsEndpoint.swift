import Hummingbird
import Logging
import Metrics
import Prometheus

/// `GET /metrics` in the Prometheus text format, from the registry that swift-metrics reports
/// into, on a loopback address (the `metrics` section). Runs as one of the daemon's services.
enum MetricsEndpoint {
    static func application(registry: PrometheusCollectorRegistry, host: String, port: Int, logger: Logger,
                            onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router()
        router.get("metrics") { _, _ -> Response in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(8192)
            registry.emit(into: &bytes)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        return Application(router: router,
                           configuration: .init(address: .hostname(host, port: port), serverName: "fallguard"),
                           onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
                           logger: logger)
    }
}

/// The daemon's figures, through swift-metrics (names as Prometheus shows them).
final class DaemonMetrics: Sendable {
    let samples = Counter(label: "fallguard_sensor_samples_total")
    let overruns = Gauge(label: "fallguard_sensor_ring_overruns")
    let rate = Gauge(label: "fallguard_sensor_rate_hz")
    let sensorHealthy = Gauge(label: "fallguard_sensor_healthy")
    let sensorFaults = Counter(label: "fallguard_sensor_faults_total")
    let fallsSuspected = Counter(label: "fallguard_falls_suspected_total")
    let alerts = Counter(label: "fallguard_alerts_total")
    /// 0 monitoring, 1 countdown, 2 alert out.
    let state = Gauge(label: "fallguard_alarm_state")
    let outboxPending = Gauge(label: "fallguard_outbox_pending")
    let outboxSent = Gauge(label: "fallguard_outbox_sent")
    let outboxFailed = Gauge(label: "fallguard_outbox_failed")
    let outboxOldestPendingAge = Gauge(label: "fallguard_outbox_oldest_pending_age_seconds")
    let cpuSeconds = Gauge(label: "fallguard_process_cpu_seconds")
    let residentBytes = Gauge(label: "fallguard_process_max_resident_bytes")
}
