import FallGuardDaemon
import Foundation
import Testing
import FallGuardTestSupport

/// Issue 36 item 1, end to end with `fallguard run`: the modem's signal quality and registration
/// as ModemManager (our python-dbusmock template on a private bus, driven through the real
/// `mmcli`) reports them reach every place a helper looks: `fallguard status`, the page's live
/// status, `/metrics` and the retained MQTT `<base>/modem` on a real mosquitto. A modem channel
/// that only stands by (no policy names it) is still watched.
@Suite(.serialized) struct ModemDaemonTests {
    @Test(.disabled(if: modemMockMissing ?? mosquittoMissing != nil))
    func theModemsSignalAndRegistrationReachStatusThePageMetricsAndMQTT() async throws {
        let mock = try ModemManagerMock(signal: 80, registration: "home")
        let broker = try await MosquittoBroker()
        let folder = temporaryFolder("modem-daemon")
        let port = freeLoopbackPort()
        try """
            sensor: {replay: "\(fixtureFolder)/D01_SA08_R01.csv"}
            gpio: {enabled: false}
            state: {directory: "\(folder)/state"}
            metrics: {listen: "127.0.0.1:\(port)"}
            wearer: {name: Margaret, location: the flat}
            channels:
              mq: {type: mqtt, host: 127.0.0.1, port: \(broker.port), device: porch, discovery: false}
              modem: {type: modem, mode: sms}
            \(broadcastPolicy("mq"))
            """.write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        // The daemon finds the mock's bus as mmcli would: DBUS_SYSTEM_BUS_ADDRESS.
        setenv("DBUS_SYSTEM_BUS_ADDRESS", mock.address, 1)
        let daemon = try BackgroundDaemon(["run", "--config", folder + "/config.yaml", "--duration", "30"], log: folder + "/daemon.log")
        unsetenv("DBUS_SYSTEM_BUS_ADDRESS")
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) }; daemon.process.waitUntilExit() }
        #expect(daemon.waitFor("monitoring:", seconds: 30), "\(daemon.output)")

        let state = folder + "/state"
        func modem() -> DaemonStatus.Modem? { (try? DaemonStatus.read(from: state))?.modem }
        #expect(await until(15) { modem()?.signalPercent == 80 }, "status.json: \(String(describing: modem()))\n\(daemon.output.suffix(1500))")
        #expect(modem()?.registration == "home" && modem()?.operatorName == "Mock Mobile" && modem()?.problem == nil, "\(String(describing: modem()))")

        let status = try runCommand(fallguardBinary, ["status", "--state", state])
        #expect(status.stdout.contains("modem: registered, signal 80 %, home (Mock Mobile)"), "\(status.stdout)")

        let metrics = try curl("http://127.0.0.1:\(port)/metrics")
        #expect(metrics.body.contains(#/\nfallguard_modem_signal_percent 80(\.0)?\n/#), "\(metrics.body.suffix(1500))")
        #expect(metrics.body.contains(#/\nfallguard_modem_ready 1(\.0)?\n/#), "\(metrics.body.suffix(1500))")

        // The page's live stream carries the status the page draws its Modem row from.
        let live = try curl("http://127.0.0.1:\(port)/live", maxTime: 3)
        #expect(live.body.contains(#/"modem"\s*:\s*\{[^}]*"signal_percent"\s*:\s*80/#), "\(live.body.prefix(1500))")

        let retained = try await Subscriber(broker, topics: ["fallguard/porch/modem"], count: 1)
        let line = try #require(await retained.lines().first, "no retained fallguard/porch/modem")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(line.split(separator: " ", maxSplits: 3).last!.utf8)) as? [String: Any])
        #expect(json["signal"] as? Int == 80 && json["registration"] as? String == "home" && json["problem"] == nil, "\(line)")

        kill(daemon.process.processIdentifier, SIGKILL)
    }
}
