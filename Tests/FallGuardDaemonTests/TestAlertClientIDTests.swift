import FallGuardTestSupport
import Foundation
import Testing

/// Issue 28: `fallguard test-alert` beside the running daemon connects under a client id of its
/// own. With the bridge's `fallguard-<device>` the broker closed the bridge's connection (and
/// sent its last will: "offline" while it ran).
@Suite(.enabled(if: mosquittoMissing == nil, "\(mosquittoMissing ?? "")"))
struct TestAlertClientIDTests {
    @Test func testAlertDoesNotTakeTheBridgesClientID() async throws {
        let broker = try await MosquittoBroker()
        let dir = TempDirectory("test-alert")
        let bridge = Process()   // the running daemon's bridge, as fallguard-porch
        bridge.executableURL = URL(fileURLWithPath: builtBinary("fallguard-mqtt-probe"))
        bridge.arguments = ["--host", "127.0.0.1", "--port", String(broker.port), "--device", "porch"]
        bridge.standardInput = Pipe()
        bridge.standardOutput = FileHandle.nullDevice
        bridge.standardError = FileHandle.nullDevice
        try bridge.run()
        defer { kill(bridge.processIdentifier, SIGKILL); bridge.waitUntilExit() }
        #expect(await broker.waitForConnection(of: "fallguard-porch"), "the bridge is connected")
        let config = dir.write("config.yaml", """
            wearer: {name: Test Wearer}
            channels:
              mq: {type: mqtt, host: 127.0.0.1, port: \(broker.port), device: porch, acknowledge-secret: 0123456789abcdef-porch}

            """ + policyBroadcastingTo("mq"), mode: 0o600)
        let sent = try fallguard(["test-alert", "--config", config, "--channel", "mq"])
        #expect(sent.status == 0 && sent.stdout.contains("mq: sent"), "\(sent.stdout)\(sent.stderr)")
        #expect(broker.log.contains("as fallguard-porch-test-"), "its own client id")
        #expect(!broker.log.contains("already connected"), "the bridge's connection was not taken over")
    }
}
