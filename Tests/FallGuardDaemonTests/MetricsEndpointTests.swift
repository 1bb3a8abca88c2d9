import FallGuardDaemon
import FallGuardTestSupport
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import Testing

/// The metrics endpoint on loopback is open to every local user: a flood of idle connections
/// must not use up the bridge's file descriptors (at the default limit of 1,024 it once killed
/// the daemon before a fall alert went out).
@Suite struct MetricsEndpointTests {
    /// This process's open file descriptors.
    static func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }

    @Test func idleConnectionsAreCappedAndClosed() async throws {
        let port = freeLoopbackPort()
        let app = try MetricsEndpoint.application(registry: PrometheusCollectorRegistry(), host: "127.0.0.1", port: port,
                                              logger: Logger(label: "test.metrics"), maximumConnections: 4,
                                              idleTimeout: .seconds(1))
        let group = ServiceGroup(services: [app], logger: Logger(label: "test.metrics"))
        let server = Task { try await group.run() }
        try await Task.sleep(for: .seconds(1))   // listening
        let before = Self.openDescriptors()
        let clients = (0..<40).map { _ in Sockets.connect(port) }
        try await Task.sleep(for: .milliseconds(500))
        let accepted = Self.openDescriptors() - before - clients.count
        #expect(accepted <= 4, "the server holds at most 4 connections, not one per client: \(accepted)")
        #expect(await until(30) { Self.openDescriptors() - before - clients.count <= 0 },
                "idle connections are closed after the idle timeout")
        clients.forEach { close($0) }
        try await Task.sleep(for: .seconds(2))   // what the backlog still held is accepted and timed out
        await group.triggerGracefulShutdown()
        try await server.value
    }
}
