import Foundation
import Testing
import FallGuardTestSupport

/// `fallguard run` on the emulated MPU6050 fed a real six-axis fall (SisFall F15 with its
/// gyroscope): the start-up line, status.json, `fallguard status` and the page's status say
/// that six axes run; the continuous recording and the incident's archived signal keep the
/// gyroscope's columns (issue 35).
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct SixAxisDaemonTests {
    static let sixAxisFall = repositoryRoot + "/Tests/FallGuardFieldTestTests/Fixtures/sixaxis/F15_SA01_R01.csv"
    static let sixAxes = "six axes (accelerometer + gyroscope)"

    @Test func theDaemonSaysSixAxesAndKeepsTheGyroscopeInItsRecordings() async throws {
        let dir = TempDirectory("sixaxis-run")
        let state = dir.path + "/state"
        let port = freeLoopbackPort()
        let config = dir.path + "/config.yaml"
        try """
            sensor: {uri: "local:", mode: buffered}
            detector: {name: sixaxis}
            gpio: {library: v1, chip: gpiochip0, buzzer: {line: GPIO18}, button: {line: GPIO17, bias: pull-up}, led: {line: GPIO27}}
            alarm: {countdown: 5, final-phase: 2}
            state: {directory: "\(state)"}
            metrics: {enabled: true, listen: "127.0.0.1:\(port)"}
            recording: {enabled: true, incident-before: 10, incident-after: 5}
            wearer: {name: Test Wearer, location: the lab}
            """.write(toFile: config, atomically: true, encoding: .utf8)
        // The fall turns the trunk 6.8 s in; the sixaxis detector decides about 6 s later.
        let run = try GPIOEmulatorRun(["run", "--config", config, "--duration", "26"],
                                      wrapper: [Emulator.root + "/tools/iio-emulator/iio-emu", "--model", "mpu6050",
                                                "--recording", Self.sixAxisFall, "--start-delay", "2", "--"], library: .v1)
        #expect(run.waitForLog("monitoring:", timeout: 20), "\(run.stderr)")
        #expect(run.waitForLog("40.0 Hz, \(Self.sixAxes)", timeout: 10), "the start-up line: \(run.stderr)")
        func status() -> String { (try? String(contentsOfFile: state + "/status.json", encoding: .utf8)) ?? "" }
        #expect(await until(10) { status().contains(#""gyroscope" : true"#) && status().contains(Self.sixAxes) }, "\(status())")
        let told = try fallguard(["status", "--state", state])
        #expect(told.stdout.contains("buffered, 40.0 Hz, \(Self.sixAxes)"), "\(told.stdout)\(told.stderr)")
        let page = try runCommand("/usr/bin/curl", ["-s", "-N", "--max-time", "2", "http://127.0.0.1:\(port)/live"])
        #expect(page.stdout.contains("event: status") && page.stdout.contains(Self.sixAxes), "the page's stream: \(page.stdout.prefix(1500))")
        // The live plot's samples carry |ω| (°/s) third: [ms, mg, °/s].
        let samples = page.stdout.split(separator: "\n").filter { $0.hasPrefix("data: [[") }
        #expect(!samples.isEmpty && samples.allSatisfy { $0.contains(try! Regex(#"^data: \[\[\d+,\d+,\d+\](,\[\d+,\d+,\d+\])*\]$"#)) },
                "the page's samples: \(samples.prefix(2))")
        #expect(run.waitForLog("fall suspected", timeout: 25), "\(run.stderr)")
        #expect(run.wait() == 0, "\(run.stderr)")

        // The continuous recording: six-axis files.
        let files = try FileManager.default.contentsOfDirectory(atPath: state + "/recordings").filter { $0.hasSuffix(".csv.gz") }
        #expect(!files.isEmpty, "recordings: \(files)")
        for f in files {
            let text = try runCommand("/bin/gzip", ["-dc", state + "/recordings/" + f]).stdout
            let header = text.split(separator: "\n").first { !$0.hasPrefix("#") }.map(String.init)
            #expect(header == "t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps", "\(f): \(text.prefix(300))")
        }
        // The incident's signal: the gyroscope's columns, the fall's turn in them.
        let incidents = state + "/incidents"
        let ids = try FileManager.default.contentsOfDirectory(atPath: incidents)
        let id = try #require(ids.first, "no incident archived: \(ids)")
        let signal = try String(contentsOfFile: "\(incidents)/\(id)/signal.csv", encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
        #expect(signal.first == "t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps", "\(signal.prefix(2))")
        let peak = signal.dropFirst().compactMap { row -> Double? in
            let v = row.split(separator: ",").compactMap { Double($0) }
            return v.count == 7 ? (v[4] * v[4] + v[5] * v[5] + v[6] * v[6]).squareRoot() : nil
        }.max() ?? 0
        // 240.8 °/s at its peak in the recording; the driver samples it between rows.
        #expect(peak > 150 && peak < 245, "peak |ω| in the archived signal: \(peak) °/s")
    }
}
