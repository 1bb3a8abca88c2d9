import Foundation
import Testing

/// The real libgpiod 1.6 against the emulated BCM2711 GPIO chip: line lookup, errors, the
/// abort button and the buzzer/LED patterns. Real time and serialized.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct GPIOEndToEndTests {
    @Test(arguments: [
        ("gpiochip0", "GPIO18"), ("pinctrl-bcm2711", "GPIO18"), ("/dev/gpiochip0", "18"), ("0", "18"),
    ])
    func linesAreFoundByChipNameLabelPathAndByLineNameOrOffset(chip: String, line: String) throws {
        let run = try GPIOEmulatorRun(["gpio", "--chip", chip, "--output", line, "--button", "GPIO17"])
        #expect(run.wait() == 0, "\(run.stderr)")
        let requested = run.events.filter { $0["event"] as? String == "requested" }.compactMap { $0["line"] as? String }
        #expect(requested == ["line 18 (GPIO18) on chip gpiochip0 (pinctrl-bcm2711)",
                              "line 17 (GPIO17) on chip gpiochip0 (pinctrl-bcm2711)"])
    }

    @Test(arguments: [
        (["--output", "GPIO99"], #"gpio: line "GPIO99" not found on chip gpiochip0 (pinctrl-bcm2711)"#),
        (["--output", "58"], "gpio: line 58 not found on chip gpiochip0 (pinctrl-bcm2711), which has 58 lines"),
        (["--chip", "gpiochip3", "--output", "1"], #"gpio: chip "gpiochip3" not found"#),
        (["--button", "GPIO22"], #"gpio: line 22 (GPIO22) on chip gpiochip0 (pinctrl-bcm2711) is busy: used by "other-driver""#),
    ])
    func missingAndBusyLinesStopWithAnErrorNamingChipAndLine(arguments: [String], message: String) throws {
        let run = try GPIOEmulatorRun(["gpio"] + arguments, emulator: ["--kernel-held", "22:other-driver:out"])
        #expect(run.wait() == 69)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.waitFor("ready", timeout: 0) == nil)
    }

    @Test func linesAreReleasedOnExitAndCanBeTakenAgain() throws {
        let run = try GPIOEmulatorRun(["gpio", "--output", "GPIO18", "--button", "GPIO17", "--duration", "1"])
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        #expect(try run.ctl("get 17").contains("requested=1"))
        #expect(run.wait() == 0)
        let log = try String(contentsOfFile: run.logPath, encoding: .utf8)
        #expect(log.components(separatedBy: #""event": "release""#).count - 1 == 2, "\(log)")
    }

    @Test func tenBouncesInFiveMillisecondsAreOneShortPressWithItsKernelTime() throws {
        let run = try GPIOEmulatorRun(["gpio", "--button", "GPIO17", "--duration", "3"])
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        let reply = try run.ctl("bounce 17 10 500 0")  // 10 edges 0.5 ms apart, ends pressed (low)
        #expect(reply.hasPrefix("ok edges="), "\(reply)")
        usleep(300_000)
        #expect(try run.ctl("release 17").hasPrefix("ok"))
        #expect(run.wait() == 0, "\(run.stderr)")
        let e = run.events
        #expect(e.filter { $0["event"] as? String == "edge" }.count >= 10)
        let presses = e.filter { $0["event"] as? String == "pressed" }
        let releases = e.filter { $0["event"] as? String == "released" }
        #expect(presses.count == 1 && releases.count == 1, "\(run.stdout)")
        #expect(releases.first?["press"] as? String == "short")
        // The press is timed at the last bounce edge (the kernel's timestamp).
        let lastNs = reply.split(separator: " ").first { $0.hasPrefix("last_ns=") }.flatMap { Int64($0.dropFirst(8)) }
        #expect(presses.first?.ns("t_ns") == lastNs)
    }

    @Test func holdingTheButtonForTwoSecondsIsALongPress() throws {
        let run = try GPIOEmulatorRun(["gpio", "--button", "GPIO17", "--duration", "4"])
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        #expect(try run.ctl("hold 17 2300").hasPrefix("ok"))
        #expect(run.wait() == 0)
        let kinds = run.events.compactMap { $0["event"] as? String }.filter { ["pressed", "held", "released"].contains($0) }
        #expect(kinds == ["pressed", "held", "released"], "\(run.stdout)")
        let r = try #require(run.events.first { $0["event"] as? String == "released" })
        #expect(r["press"] as? String == "long")
        #expect(abs((r["duration_ms"] as? Double ?? 0) - 2300) < 100)
    }

    @Test func theBuzzerPatternIsReadBackFromTheKernelSideWithItsTimes() throws {
        let run = try GPIOEmulatorRun(["gpio", "--output", "GPIO18", "--output", "GPIO27", "--pattern", "50/150x3+400", "--duration", "2.5"])
        #expect(run.wait() == 0, "\(run.stderr)")
        for offset in [18, 27] {
            let lv = try run.levels(offset: offset)
            #expect(lv.count >= 16, "\(offset): \(lv.count) changes")
            let ons = lv.filter { $0.value == 1 }.map { Double($0.t - lv[0].t) / 1e6 }
            // bursts of three 50 ms beeps every 200 ms, a burst every 1000 ms
            for (i, t) in ons.prefix(6).enumerated() {
                let expected = Double(i / 3) * 1000 + Double(i % 3) * 200
                #expect(abs(t - expected) < 40, "on edge \(i) at \(t) ms, expected \(expected)")
            }
            for (a, b) in zip(lv, lv.dropFirst()) where a.value == 1 {
                #expect(abs(Double(b.t - a.t) / 1e6 - 50) < 40)
            }
        }
    }
}
