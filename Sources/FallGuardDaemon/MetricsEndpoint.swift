import FallGuardWeb
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import NIOSSL
import Logging
import Metrics
import Prometheus
import Synchronization

/// The daemon's HTTP server (the `metrics` section's address): `GET /metrics` in the Prometheus
/// text format, from the registry that swift-metrics reports into, and the page (``WebSite``,
/// the `web` section), over TLS when `web` names a certificate. Runs as one of the daemon's
/// services. With a password, `/metrics` too needs a session or HTTP Basic.
///
/// Any local user can connect, so connections are capped (``maximumConnections``; more wait
/// in a short backlog, then are refused) and closed after ``idleTimeout`` without a request:
/// a flood of idle connections can never use up the bridge's file descriptors. Within that,
/// what one client may hold is capped by ``ClientLimits`` (the ``ConnectionGuard`` on each
/// connection: a deadline for the whole request, connections per client).
public enum MetricsEndpoint {
    public static let maximumConnections = 64
    public static let idleTimeout = Duration.seconds(10)

    /// The server's TLS from PEM files (`web.tls-certificate`, `web.tls-key`): TLS 1.2 at least.
    public static func tls(certificate: String, key: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain,
                                                           privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        tls.minimumTLSVersion = .tlsv12
        return tls
    }

    public static func application(registry: PrometheusCollectorRegistry, host: String, port: Int, logger: Logger,
                                   maximumConnections: Int = Self.maximumConnections, idleTimeout: Duration = Self.idleTimeout,
                                   requestDeadline: Duration = ClientLimits.requestDeadline,
                                   connectionsPerClient: Int = ClientLimits.connectionsPerClient,
                                   web: WebSite? = nil, tls: TLSConfiguration? = nil,
                                   onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let router = Router(context: BridgeRequestContext.self)
        router.get("metrics") { request, context -> Response in
            if let web, let refusal = web.metricsRefusal(request, client: context.client) { return refusal }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(8192)
            registry.emit(into: &bytes)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        web?.addRoutes(to: router)
        let clients = ClientConnections(perClient: connectionsPerClient, total: ClientLimits.total(below: maximumConnections))
        let http1 = HTTPServerBuilder.http1(configuration: .init(
            additionalChannelHandlers: [ConnectionGuard(clients, deadline: requestDeadline)], idleTimeout: TimeAmount(idleTimeout)))
        return HTTPServer(router: router,
                          server: try tls.map { try .tls(http1, tlsConfiguration: $0) } ?? http1,
                          configuration: .init(address: .hostname(host, port: port), serverName: "fallguard", backlog: 16,
                                               availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections)),
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
    /// 1 while the alert out has a message delivered (a provider or receiver accepted it).
    let alertDelivered = Gauge(label: "fallguard_alert_delivered")
    /// 1 while someone answered the call of the alert out.
    let alertReached = Gauge(label: "fallguard_alert_reached")
    let outboxPending = Gauge(label: "fallguard_outbox_pending")
    let outboxSent = Gauge(label: "fallguard_outbox_sent")
    let outboxFailed = Gauge(label: "fallguard_outbox_failed")
    let outboxOldestPendingAge = Gauge(label: "fallguard_outbox_oldest_pending_age_seconds")
    /// 1 when nothing keeps alerts from going out (see `DaemonHealth.problems`), 0 otherwise.
    let healthy = Gauge(label: "fallguard_healthy")
    /// The channels the configuration names; 0: nobody will be told (alerts reach the journal only).
    let channelsConfigured = Gauge(label: "fallguard_channels_configured")
    /// Alerts the outbox could not take, held in memory and sent directly.
    let outboxHeldInMemory = Gauge(label: "fallguard_outbox_held_in_memory")
    /// Outbox rows set aside because they could not be read.
    let outboxQuarantined = Gauge(label: "fallguard_outbox_quarantined")
    /// `fallguard_battery_capacity_percent` (the lowest battery) and `fallguard_mains_online`
    /// (1 fed, 0 on battery), each made at its first value: absent while no power supply says.
    private let power = Mutex<(battery: Metrics.Gauge?, mains: Metrics.Gauge?)>((nil, nil))

    func record(batteryCapacity: Int?, mainsOnline: Bool?) {
        power.withLock { p in
            if let batteryCapacity {
                if p.battery == nil { p.battery = Metrics.Gauge(label: "fallguard_battery_capacity_percent") }
                p.battery?.record(batteryCapacity)
            }
            if let mainsOnline {
                if p.mains == nil { p.mains = Metrics.Gauge(label: "fallguard_mains_online") }
                p.mains?.record(mainsOnline ? 1 : 0)
            }
        }
    }
    /// `fallguard_modem_signal_percent` and `fallguard_modem_ready` (1: registered, can send),
    /// made at the first look at a modem: absent without a `modem` channel.
    private let modem = Mutex<(signal: Metrics.Gauge?, ready: Metrics.Gauge?)>((nil, nil))

    func record(modemSignal: Int?, registered: Bool) {
        modem.withLock { m in
            if m.ready == nil { m.ready = Metrics.Gauge(label: "fallguard_modem_ready") }
            m.ready?.record(registered ? 1 : 0)
            if m.signal == nil { m.signal = Metrics.Gauge(label: "fallguard_modem_signal_percent") }
            m.signal?.record(modemSignal ?? 0)
        }
    }
    let cpuSeconds = Gauge(label: "fallguard_process_cpu_seconds")
    let residentBytes = Gauge(label: "fallguard_process_max_resident_bytes")
}

extension TimeAmount {
    /// A Swift `Duration` as NIO's time amount (nanoseconds).
    init(_ d: Duration) {
        let (seconds, attoseconds) = d.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
