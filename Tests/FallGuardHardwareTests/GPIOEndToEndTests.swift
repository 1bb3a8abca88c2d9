import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

/// The real libgpiod, 1.6 (uAPI v1) and 2.x (uAPI v2), against the emulated BCM2711 GPIO
/// chip: line lookup, errors, the abort button and the buzzer/LED patterns. Every test runs
/// with each library. Real time and serialized.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct GPIOEndToEndTests {
    @Test(arguments: GPIOLib.allCases, [
        ("gpiochip0", "GPIO18"), ("pinctrl-bcm2711", "GPIO18"), ("/dev/gpiochip0", "18"), ("0", "18"),
    ])
    func linesAreFoundByChipNameLabelPathAndByLineNameOrOffset(lib: GPIOLib, given: (chip: String, line: String)) throws {
        let (chip, line) = given
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--chip", chip, "--output", line, "--button", "GPIO17"], library: lib)
        #expect(run.wait() == 0, "\(run.stderr)")
        #expect(run.events.first?["event"] as? String == "library" && run.events.first?["api"] as? String == lib.rawValue,
                "the first line names the library: \(run.stdout)")
        let requested = run.events.filter { $0["event"] as? String == "requested" }.compactMap { $0["line"] as? String }
        #expect(requested == ["line 18 (GPIO18) on chip gpiochip0 (pinctrl-bcm2711)",
                              "line 17 (GPIO17) on chip gpiochip0 (pinctrl-bcm2711)"])
    }

    @Test(arguments: GPIOLib.allCases, [
        (["--output", "GPIO99"], #"gpio: line "GPIO99" not found on chip gpiochip0 (pinctrl-bcm2711)"#),
        (["--output", "58"], "gpio: line 58 not found on chip gpiochip0 (pinctrl-bcm2711), which has 58 lines"),
        (["--chip", "gpiochip3", "--output", "1"], #"gpio: chip "gpiochip3" not found"#),
        (["--chip", "no-such-label", "--output", "1"], #"gpio: chip "no-such-label" not found"#),
        (["--button", "GPIO22"], #"gpio: line 22 (GPIO22) on chip gpiochip0 (pinctrl-bcm2711) is busy: used by "other-driver""#),
        (["--output", "GPIO18", "--output", "GPIO18"], #"gpio: line 18 (GPIO18) on chip gpiochip0 (pinctrl-bcm2711) is busy: used by "fallguard""#),
    ])
    func missingAndBusyLinesStopWithAnErrorNamingChipAndLine(lib: GPIOLib, given: (arguments: [String], message: String)) throws {
        let (arguments, message) = given
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue] + arguments, emulator: ["--kernel-held", "22:other-driver:out"], library: lib)
        #expect(run.wait() == 69)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.waitFor("ready", timeout: 0) == nil)
    }

    @Test(arguments: GPIOLib.allCases)
    func linesAreReleasedOnExitAndCanBeTakenAgain(lib: GPIOLib) throws {
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--output", "GPIO18", "--button", "GPIO17", "--duration", "1"], library: lib)
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        #expect(try run.ctl("get 17").contains("requested=1"))
        #expect(run.wait() == 0)
        let log = try String(contentsOfFile: run.logPath, encoding: .utf8)
        #expect(log.components(separatedBy: #""event": "release""#).count - 1 == 2, "\(log)")
    }

    /// v1: the edges reach the software debounce; v2: the kernel debounces (30 ms) and reports
    /// one edge per settled level, which the button dates back by the period.
    @Test(arguments: GPIOLib.allCases)
    func tenBouncesInFiveMillisecondsAreOneShortPressWithItsKernelTime(lib: GPIOLib) throws {
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--button", "GPIO17", "--duration", "3"], library: lib)
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        let requested = try #require(run.events.first { $0["direction"] as? String == "input" })
        #expect(requested["kernel_debounce_us"] as? Int == (lib == .v2 ? 30_000 : 0))
        #expect(try run.ctl("get 17").contains(lib == .v2 ? "kind=line" : "kind=event"))
        let reply = try run.ctl("bounce 17 10 500 0")  // 10 edges 0.5 ms apart, ends pressed (low)
        #expect(reply.hasPrefix("ok edges="), "\(reply)")
        usleep(300_000)
        #expect(try run.ctl("release 17").hasPrefix("ok"))
        #expect(run.wait() == 0, "\(run.stderr)")
        let e = run.events
        let edges = e.filter { $0["event"] as? String == "edge" }.count
        #expect(lib == .v1 ? edges >= 10 : edges == 2, "\(edges) edges reached fallguard")
        let presses = e.filter { $0["event"] as? String == "pressed" }
        let releases = e.filter { $0["event"] as? String == "released" }
        #expect(presses.count == 1 && releases.count == 1, "\(run.stdout)")
        #expect(releases.first?["press"] as? String == "short")
        // The press is timed at the last bounce edge (the kernel's timestamp; with the kernel's
        // debounce, its stamp less the period, which the emulator ends no earlier than that).
        let lastNs = try #require(reply.split(separator: " ").first { $0.hasPrefix("last_ns=") }.flatMap { Int64($0.dropFirst(8)) })
        let pressNs = try #require(presses.first?.ns("t_ns"))
        if lib == .v1 {
            #expect(pressNs == lastNs)
        } else {
            #expect(pressNs >= lastNs && pressNs - lastNs < 10_000_000, "press \(Double(pressNs - lastNs) / 1e6) ms after the last edge")
        }
    }

    @Test(arguments: GPIOLib.allCases)
    func holdingTheButtonForTwoSecondsIsALongPress(lib: GPIOLib) throws {
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--button", "GPIO17", "--duration", "4"], library: lib)
        try #require(run.waitFor("ready") != nil, "\(run.stderr)")
        #expect(try run.ctl("hold 17 2300").hasPrefix("ok"))
        #expect(run.wait() == 0)
        let kinds = run.events.compactMap { $0["event"] as? String }.filter { ["pressed", "held", "released"].contains($0) }
        #expect(kinds == ["pressed", "held", "released"], "\(run.stdout)")
        let r = try #require(run.events.first { $0["event"] as? String == "released" })
        #expect(r["press"] as? String == "long")
        // Against the hold the emulator actually made (its release timer runs late under load).
        let held = try #require(try run.heldMs(offset: 17))
        #expect(held >= 2300 && abs((r["duration_ms"] as? Double ?? 0) - held) < 100, "\(r), held \(held) ms")
    }

    /// Released 50 ms before the long-press time with a 100 ms debounce: short, and never "held"
    /// (with the kernel's debounce the release is reported 100 ms late, after the long-press time
    /// has passed in real time: the button's clock runs the period behind to wait for it).
    @Test(arguments: GPIOLib.allCases)
    func releasedJustBeforeTheLongPressTimeIsAShortPress(lib: GPIOLib) throws {
        // The emulator's release timer runs late under load: a hold it made 1990 ms or longer
        // does not test "just before" (2000 ms is long); such a run is made again, up to 3 times.
        for attempt in 1...3 {
            let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--button", "GPIO17", "--debounce-ms", "100", "--duration", "3.5"],
                                          library: lib)
            try #require(run.waitFor("ready") != nil, "\(run.stderr)")
            #expect(try run.ctl("hold 17 1950").hasPrefix("ok"))
            #expect(run.wait() == 0)
            let held = try #require(try run.heldMs(offset: 17))
            if held >= 1990, attempt < 3 {
                print("\(lib.testDescription): the emulator held \(held) ms, not 1950: again")
                continue
            }
            #expect(held < 1990, "the emulator held \(held) ms in 3 attempts")
            let kinds = run.events.compactMap { $0["event"] as? String }.filter { ["pressed", "held", "released"].contains($0) }
            #expect(kinds == ["pressed", "released"], "\(run.stdout)")
            let r = try #require(run.events.first { $0["event"] as? String == "released" })
            #expect(r["press"] as? String == "short")
            #expect(abs((r["duration_ms"] as? Double ?? 0) - held) < 20, "\(r), held \(held) ms")
            return
        }
    }

    @Test(arguments: GPIOLib.allCases)
    func theBuzzerPatternIsReadBackFromTheKernelSideWithItsTimes(lib: GPIOLib) throws {
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--output", "GPIO18", "--output", "GPIO27", "--pattern", "50/150x3+400", "--duration", "2.5"], library: lib)
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

/// Issue 16's bar: with `gpio.library: v2` (only libgpiod.so.3 used), `fallguard gpio` names
/// libgpiod 2.x on its first line and plays a pattern whose every edge the emulator logs within
/// ±10 ms of the schedule (its start fitted as the median offset, as bench/buzzer-timing.sh).
/// The same with v1, for comparison.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct LibGPIOD2BarTests {
    @Test(arguments: [GPIOLib.v2, .v1])
    func theFirstLineNamesTheLibraryAndThePatternEdgesAreWithinTenMilliseconds(lib: GPIOLib) throws {
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--output", "GPIO18", "--pattern", "50/150", "--duration", "8"], library: lib)
        #expect(run.wait() == 0, "\(run.stderr)")
        let first = try #require(run.events.first)
        let soname = lib == .v2 ? "libgpiod.so.3" : "libgpiod.so.2"
        #expect(first["event"] as? String == "library" && first["api"] as? String == lib.rawValue && first["soname"] as? String == soname)
        #expect((first["version"] as? String)?.hasPrefix(lib == .v2 ? "2." : "1.6") == true, "\(first)")
        var lv = try run.levels(offset: 18)
        lv = Array(lv.drop { $0.value != 1 })
        if lv.count % 2 == 0, lv.last?.value == 0 { lv.removeLast() }  // the switch-off at exit
        #expect(lv.count >= 79, "\(lv.count) edges in 8 s")
        func scheduled(_ k: Int) -> Int64 { Int64(k / 2) * 200_000_000 + (k % 2 == 1 ? 50_000_000 : 0) }
        let t0 = lv.enumerated().map { $0.element.t - scheduled($0.offset) }.sorted()[lv.count / 2]
        let errors = lv.enumerated().map { abs(Double($0.element.t - t0 - scheduled($0.offset)) / 1e6) }
        for (k, e) in lv.enumerated() { #expect(e.value == (k % 2 == 0 ? 1 : 0), "edge \(k) level") }
        let sorted = errors.sorted()
        let worst = errors.enumerated().sorted { $0.element > $1.element }.prefix(3).map { String(format: "edge %d %.3f ms", $0.offset, $0.element) }
        print(String(format: "%@ pattern 50/150 ms: %d edges, max error %.3f ms, p99 %.3f ms, median %.3f ms (worst: %@)",
                     lib.testDescription, lv.count, sorted.last ?? -1, sorted[min(sorted.count - 1, sorted.count * 99 / 100)],
                     sorted[sorted.count / 2], worst.joined(separator: ", ")))
        #expect((sorted.last ?? 99) <= 10, "max edge error \(sorted.last ?? -1) ms")
    }

    @Test func withoutLibgpiod3TheV2ChoiceStopsWithAnErrorNamingIt() throws {
        // The emulator's environment without the unpacked 2.x: on a system with libgpiod.so.3
        // installed (Debian 13) there is nothing to test.
        if (try? LibGPIOD2.load()) != nil {
            Issue.record("not tested: libgpiod.so.3 is installed system-wide here", severity: .warning)
            try Test.cancel("libgpiod.so.3 is installed system-wide here")
        }
        let run = try GPIOEmulatorRun(["gpio", "--library", "v2", "--output", "GPIO18"], library: .v1)
        #expect(run.wait() == 69)
        #expect(run.stderr.contains("gpio: libgpiod.so.3 (libgpiod 2.x) cannot be loaded"), "\(run.stderr)")
    }
}

/// A passive buzzer: the line toggles at the tone frequency only while the pattern is on.
/// Judged on the emulator's own stamps (each taken in fallguard at its ioctl), bursts against
/// each other: a burst's first toggle may come a few ms after the pattern switched on (the tone
/// thread wakes late under load), and a toggle slot missed by more than a half period restarts
/// the wave, so the count has a margin while the spacing, spans and silences stay tight.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct PassiveBuzzerTests {
    @Test(arguments: GPIOLib.allCases)
    func aToggledToneFillsTheOnTimesAndStopsInTheOffTimes(lib: GPIOLib) throws {
        let run = try GPIOEmulatorRun(["gpio", "--library", lib.rawValue, "--output", "GPIO18", "--pattern", "200/300", "--tone-hz", "250", "--duration", "1.2"], library: lib)
        #expect(run.wait() == 0, "\(run.stderr)")
        let lv = try run.levels(offset: 18)
        let t0 = try #require(lv.first { $0.value == 1 }).t
        let ms = lv.map { Double($0.t - t0) / 1e6 }.filter { $0 >= 0 }
        // Bursts: runs of changes with no gap over 100 ms (the tone changes every 2 ms, the
        // pattern is off for 300 ms).
        var bursts: [[Double]] = []
        for t in ms {
            if let last = bursts.last?.last, t - last <= 100 { bursts[bursts.count - 1].append(t) } else { bursts.append([t]) }
        }
        let shape = bursts.map { String(format: "%d changes %.1f–%.1f ms", $0.count, $0.first!, $0.last!) }
        print("\(lib.testDescription) tone bursts: \(shape)")
        try #require(bursts.count >= 2, "two bursts in 0.7 s: \(shape)")
        let (a, b) = (bursts[0], bursts[1])
        // 250 Hz: a change every 2 ms (the median spacing inside the bursts; the tone thread keeps
        // an absolute schedule, so late wake-ups do not stretch it).
        let spacing = [a, b].flatMap { zip($0, $0.dropFirst()).map { $1 - $0 } }.sorted()
        try #require(spacing.count >= 20, "a tone, not single switchings: \(shape)")
        let median = spacing[spacing.count / 2]
        #expect(abs(median - 2) <= 0.25, "median change spacing \(median) ms, 2 ms at 250 Hz")
        for (i, burst) in [a, b].enumerated() {
            // Fills the 200 ms on-time (its start may be late by a wake-up, its end by the
            // player's), toggling throughout: most of the 100 slots, no hole over 50 ms (a
            // quarter of the on-time: on a machine busy with two compilers beside it, a wake-up
            // of the tone thread was seen 22 ms late; a hole is a click, not a missing beep).
            let span = burst.last! - burst.first!
            #expect(span >= 180 && span <= 215, "burst \(i) lasts \(span) ms, the on-time is 200 ms")
            #expect(burst.count >= 60 && burst.count <= 110, "burst \(i): \(burst.count) changes, 100 at 250 Hz in 200 ms")
            let hole = zip(burst, burst.dropFirst()).map { $1 - $0 }.max() ?? 0
            #expect(hole <= 50, "burst \(i): a \(hole) ms hole in the tone")
        }
        // Silent between the beeps, and the second burst 500 ms after the first (the player's
        // absolute schedule; each start may be late by a wake-up).
        #expect(b.first! - a.last! >= 270, "silence \(b.first! - a.last!) ms between the beeps, the off-time is 300 ms")
        #expect(abs(b.first! - a.first! - 500) <= 25, "second burst at \(b.first! - a.first!) ms, the period is 500 ms")
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
