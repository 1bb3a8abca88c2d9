import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

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

/// A passive buzzer: the line toggles at the tone frequency only while the pattern is on.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct PassiveBuzzerTests {
    @Test func aToggledToneFillsTheOnTimesAndStopsInTheOffTimes() throws {
        let run = try GPIOEmulatorRun(["gpio", "--output", "GPIO18", "--pattern", "200/300", "--tone-hz", "250", "--duration", "1.2"])
        #expect(run.wait() == 0, "\(run.stderr)")
        let lv = try run.levels(offset: 18)
        let t0 = try #require(lv.first { $0.value == 1 }).t
        let ms = lv.map { Double($0.t - t0) / 1e6 }
        // 250 Hz: a change every 2 ms during 0–200 ms and 500–700 ms, none in 205–495 ms.
        let firstBurst = ms.filter { $0 >= 0 && $0 < 200 }.count
        #expect(firstBurst >= 80 && firstBurst <= 101, "\(firstBurst) changes in the first 200 ms")
        #expect(ms.filter { $0 > 205 && $0 < 495 }.isEmpty, "silent between the beeps")
        #expect(ms.filter { $0 >= 500 && $0 < 700 }.count >= 80)
        #expect(lv.last?.value == 0)
    }
}

/// The PWM tone writes the kernel's pwm sysfs files (a plain directory stands in for sysfs).
@Suite struct PWMToneTests {
    @Test func periodDutyAndEnableAreWrittenForTheTone() throws {
        let root = NSTemporaryDirectory() + "fg-pwm-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ch = root + "/pwmchip0/pwm1"
        try FileManager.default.createDirectory(atPath: ch, withIntermediateDirectories: true)
        for f in ["period", "duty_cycle", "enable"] { _ = FileManager.default.createFile(atPath: ch + "/" + f, contents: nil) }
        let tone = try PWMTone(chip: 0, channel: 1, frequency: 2000, sysfsRoot: root)
        func read(_ f: String) throws -> String { try String(contentsOfFile: ch + "/" + f, encoding: .utf8) }
        #expect(try read("period") == "500000" && read("duty_cycle") == "250000")
        try tone.set(true)
        #expect(try read("enable") == "1")
        try tone.set(false)
        #expect(try read("enable") == "0")
        let missing = #expect(throws: GPIOError.self) { try PWMTone(chip: 3, channel: 0, frequency: 2000, sysfsRoot: root) }
        #expect(missing?.description.contains(root + "/pwmchip3/export") == true)
    }
}
