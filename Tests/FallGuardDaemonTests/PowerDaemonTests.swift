import FallGuardConfig
import FallGuardCore
import FallGuardDaemon
import FallGuardTestSupport
import Foundation
import Testing

/// Issue 36 item 2: the assembled daemon watching a `power_supply` tree laid out as the
/// kernel's `test_power` makes it (the kernel rig loads the real driver: guest-tests.py `power`).
@Suite(.serialized) struct PowerDaemonTests {
    static func set(_ root: String, _ name: String, _ files: [String: String]) {
        try! FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
        for (file, value) in files { try! (value + "\n").write(toFile: "\(root)/\(name)/\(file)", atomically: true, encoding: .utf8) }
    }

    /// The device-problem and device-recovered alerts the exec channel received, as
    /// (kind, problem, body).
    static func powerAlerts(_ dir: TempDirectory) -> [(kind: String, problem: String, body: String)] {
        InProcessDaemonTests.alerts(dir).compactMap { a in
            guard let alert = a["alert"] as? [String: Any], let kind = alert["kind"] as? String,
                  kind == "device-problem" || kind == "device-recovered",
                  let fault = (alert["sensor_fault"] ?? alert["sensorFault"]) as? [String: Any],
                  let problem = fault["problem"] as? String else { return nil }
            return (kind, problem, ((a["message"] as? [String: Any])?["body"] as? String) ?? "")
        }
    }

    @Test func batteryLowOnceOnBatteryAndMainsBackEachOnceInStatusToo() async throws {
        let dir = TempDirectory("power-daemon")
        let root = dir.path + "/power_supply"
        Self.set(root, "test_ac", ["type": "Mains", "online": "1"])
        Self.set(root, "test_battery", ["type": "Battery", "capacity": "50", "status": "Discharging", "present": "1"])
        let daemon = try InProcessDaemonTests.daemon(in: dir, gpio: InMemoryGPIO(), extra: """
            power: {root: "\(root)", poll-interval: 1, battery-low: 20 %, on-battery-after: 2}
            """)
        let run = Task { try await daemon.run(duration: 40) }
        defer { run.cancel() }
        func status() -> DaemonStatus.Power? { (try? DaemonStatus.read(from: dir.path + "/state"))?.power }
        #expect(await until(15) { status()?.batteries.first?.capacity == 50 }, "the battery in status.json")
        #expect(status()?.mainsOnline == true && status()?.batteryLow == false)

        Self.set(root, "test_battery", ["capacity": "15"])
        #expect(await until(10) { Self.powerAlerts(dir).contains { $0.problem == "battery-low" } }, "battery low is told")
        try await Task.sleep(for: .seconds(3))   // three more polls at 15 %
        let low = Self.powerAlerts(dir).filter { $0.problem == "battery-low" }
        #expect(low.count == 1, "once, not once per poll: \(low)")
        #expect(low.first?.body.contains("low battery") == true && low.first?.body.contains("15 %") == true, "\(low)")
        #expect(await until(5) { status()?.batteryLow == true })

        Self.set(root, "test_ac", ["online": "0"])
        #expect(await until(10) { Self.powerAlerts(dir).contains { $0.problem == "on-battery" && $0.kind == "device-problem" } })
        #expect(await until(5) { status()?.mainsOnline == false && status()?.onBatterySince != nil }, "on battery in status.json")
        Self.set(root, "test_ac", ["online": "1"])
        #expect(await until(10) { Self.powerAlerts(dir).contains { $0.kind == "device-recovered" } }, "mains back")
        try await Task.sleep(for: .seconds(2))
        let all = Self.powerAlerts(dir)
        #expect(all.map { "\($0.kind) \($0.problem)" } == ["device-problem battery-low", "device-problem on-battery",
                                                           "device-recovered on-battery"], "\(all)")
        #expect(all.last?.body.contains("mains power back") == true, "\(all)")
        #expect(await until(5) { status()?.mainsOnline == true && status()?.onBatterySince == nil })
        run.cancel()
        _ = try? await run.value
    }

    @Test func noPowerSupplyClaimsNothing() async throws {
        let dir = TempDirectory("power-none")
        try FileManager.default.createDirectory(atPath: dir.path + "/empty", withIntermediateDirectories: true)
        let daemon = try InProcessDaemonTests.daemon(in: dir, gpio: InMemoryGPIO(), extra: """
            power: {root: "\(dir.path)/empty", poll-interval: 1}
            """)
        let run = Task { try await daemon.run(duration: 20) }
        defer { run.cancel() }
        #expect(await until(15) { (try? DaemonStatus.read(from: dir.path + "/state")) != nil })
        try await Task.sleep(for: .seconds(2))
        let text = try String(contentsOfFile: DaemonStatus.path(in: dir.path + "/state"), encoding: .utf8)
        #expect(!text.contains("\"power\""), "\(text)")
        #expect(Self.powerAlerts(dir).isEmpty)
        run.cancel()
        _ = try? await run.value
    }
}
