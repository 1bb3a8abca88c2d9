@testable import FallGuardDaemon
import Foundation
import Testing
import FallGuardTestSupport

/// Issue 39 item 2, a first boot that protects: `fallguard run` on deploy/fallguard.yaml as the
/// package installs it (no channel), on emulated hardware (the IIO emulator's MPU6050 streams
/// a real fall through the real libiio; the buzzer, LED and button through the real libgpiod in
/// the GPIO emulator). It starts, detects the fall and sounds the buzzer, and says that nobody
/// will be told: in the log at start, status.json, `fallguard status`, the page's stream and
/// /metrics; the LED blinks the fault pattern while it monitors.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct FirstBootTests {
    static let nobody = "no channel: nobody will be told"

    @Test func theShippedConfigurationProtectsLocallyAndSaysNobodyWillBeTold() async throws {
        let dir = TempDirectory("firstboot")
        let state = dir.path + "/state"
        let fall = try shortFallRecording(in: dir.path)
        let port = freeLoopbackPort()
        let run = try GPIOEmulatorRun(["run", "--config", repositoryRoot + "/deploy/fallguard.yaml", "--state", state,
                                       "--listen", "127.0.0.1:\(port)", "--duration", "16"],
                                      wrapper: [Emulator.root + "/tools/iio-emulator/iio-emu", "--model", "mpu6050",
                                                "--recording", fall, "--"])
        #expect(run.waitForLog("monitoring:", timeout: 20), "\(run.stderr)")
        #expect(run.stderr.contains("warning: channels: \(Self.nobody)"), "check at start: \(run.stderr)")
        #expect(run.stderr.contains("monitoring locally only: \(Self.nobody)"), "\(run.stderr)")
        #expect(run.waitForLog("UNHEALTHY: \(Self.nobody)", timeout: 5), "\(run.stderr)")
        func status() -> String { (try? String(contentsOfFile: state + "/status.json", encoding: .utf8)) ?? "" }
        #expect(await until(5) { status().contains(Self.nobody) }, "status.json: \(status())")
        let told = try fallguard(["status", "--state", state])
        #expect(told.status == 1 && told.stdout.contains("PROBLEM: \(Self.nobody)"), "\(told.stdout)\(told.stderr)")
        let metrics = try runCommand("/usr/bin/curl", ["-s", "--max-time", "5", "http://127.0.0.1:\(port)/metrics"])
        #expect(metrics.stdout.contains("fallguard_channels_configured 0") && metrics.stdout.contains("fallguard_healthy 0"),
                "\(metrics.stdout)")
        let page = try runCommand("/usr/bin/curl", ["-s", "-N", "--max-time", "2", "http://127.0.0.1:\(port)/live"])
        #expect(page.stdout.contains("event: status") && page.stdout.contains(Self.nobody), "the page's stream: \(page.stdout.prefix(2000))")
        #expect(run.waitForLog("fall suspected", timeout: 20), "\(run.stderr)")
        #expect(run.wait() == 0, "\(run.stderr)")
        let buzzer = try run.levels(offset: 18)
        #expect(buzzer.contains { $0.value == 1 } && buzzer.last?.value == 0, "the buzzer sounded the countdown: \(buzzer)")
        // Before the fall, while monitoring: the LED blinks the fault pattern (three blinks 250 ms
        // apart, the next three 1.75 s after the first; InProcessDaemonTests), not the heartbeat.
        let on = try run.levels(offset: 27).filter { $0.value == 1 }.map { Double($0.t) / 1e9 }
        let faultPeriod = on.count >= 4 && (0..<(on.count - 3)).contains { i in
            let gaps = (0..<3).map { on[i + $0 + 1] - on[i + $0] }
            return gaps[0] > 0.2 && gaps[0] < 0.3 && gaps[1] > 0.2 && gaps[1] < 0.3 && gaps[2] > 1.1 && gaps[2] < 1.4
        }
        #expect(faultPeriod, "the LED's fault pattern: \(on)")
        // The countdown cut short by the stop sends its alert: to the console, that is the journal.
        #expect(run.stdout.contains("[console]"), "\(run.stdout)")
    }

    /// The log says a problem when it begins, again every `every` seconds while it goes on, and
    /// when it ends.
    @Test func aProblemThatGoesOnIsSaidAgainEveryInterval() {
        var last: [String: Double] = [:]
        var said = DaemonHealth.toSay(["nobody"], last: last, at: 0, every: 3600)
        #expect(said.begun == ["nobody"] && said.goingOn.isEmpty && said.changedHealth)
        last = said.last
        said = DaemonHealth.toSay(["nobody"], last: last, at: 3599, every: 3600)
        #expect(said.begun.isEmpty && said.goingOn.isEmpty && !said.changedHealth)
        last = said.last
        said = DaemonHealth.toSay(["nobody", "disk"], last: last, at: 3600, every: 3600)
        #expect(said.begun == ["disk"] && said.goingOn == ["nobody"] && !said.changedHealth)
        last = said.last
        said = DaemonHealth.toSay(["disk"], last: last, at: 3700, every: 3600)
        #expect(said.resolved == ["nobody"] && said.goingOn.isEmpty && said.begun.isEmpty)
        said = DaemonHealth.toSay([], last: said.last, at: 7300, every: 3600)
        #expect(said.resolved == ["disk"] && said.changedHealth && said.last.isEmpty)
    }
}
