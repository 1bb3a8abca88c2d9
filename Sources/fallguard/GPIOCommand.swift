import ArgumentParser
import FallGuardConfig
import FallGuardConfigKeys
import FallGuardDaemon
import FallGuardCore
import FallGuardHardware
import Foundation
import Synchronization

struct GPIOCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpio",
        abstract: "Bring-up of the buzzer, LED and button lines through libgpiod: request, play, watch.",
        discussion: """
            The first JSON line names the libgpiod in use ({"event":"library","library":"libgpiod",\
            "version":"2.1.3","api":"v2","soname":"libgpiod.so.3"}). \
            Requests each line given (a missing or busy line stops with an error naming chip and \
            line, exit status 69), prints one JSON line per requested line, plays --pattern on the \
            outputs and prints every debounced --button event (pressed, held, released with its \
            duration and short/long) as a JSON line with its kernel time (t_ns, CLOCK_MONOTONIC), \
            for --duration seconds. Lines are released on exit.
            Patterns: a sound name (countdown, countdown-final, alert-active, help-requested, \
            sensor-fault, acknowledge) or ON/OFF[xCOUNT][+PAUSE] in ms, e.g. 200/800 or 50/150x3+9400.
            """)

    @Option(help: "libgpiod: auto (libgpiod.so.3 if present, else libgpiod.so.2), v1 (1.6) or v2 (2.x).")
    var library = Word<RawWords<GPIOLibraryChoice>>(.auto)

    @Option(help: "Chip: name (gpiochip0), label (pinctrl-bcm2711), path (/dev/gpiochip0) or number.")
    var chip = GPIOSection.defaults.wiring.chip

    @Option(name: .customLong("output"), help: ArgumentHelp("An output line (name GPIO18 or offset 18); repeatable.", valueName: "line"))
    var outputs: [String] = []

    @Option(help: ArgumentHelp("The button line: pull-up, active-low, both edges.", valueName: "line"))
    var button: String?

    @Option(help: "Bias of the button line: pull-up, pull-down, disable, as-is.")
    var bias = Word<BiasWords>(GPIOSection.defaults.wiring.button.bias)

    @Flag(help: "The button reads high when pressed (default: active-low, a button to ground).")
    var activeHighButton = false

    @Option(help: "Debounce in ms.")
    var debounceMs = AlarmSection.defaults.debounceMs

    @Option(help: "Long press in seconds.")
    var longPress = AlarmSection.defaults.longPress

    @Option(help: "Pattern to play on the outputs.")
    var pattern: String?

    @Option(help: "Play the pattern as a tone of this frequency (a passive buzzer on a toggled line).")
    var toneHz: Double?

    @Option(help: "Seconds to run after requesting (default 0: request, report, release).")
    var duration = Seconds(0)

    func validate() throws {
        try requireOption("debounce-ms", debounceMs, in: ButtonTimings.debounceRange)
        try requireOption("long-press", longPress, in: AlertConfiguration.longPressRange)
        if let toneHz { try requireOption("tone-hz", toneHz, in: BuzzerWiring.toneRange) }
    }

    func run() throws {
        let (bias, library) = (bias.value, library.value)
        let timings = ButtonTimings(debounceMs: debounceMs, longPress: longPress)
        let played = try pattern.map { try parsePattern($0, patterns: AlarmSection.defaults.alarmPatterns) }
        let consumer = GPIOSection.defaults.wiring.consumer
        let (stop, signals) = stopOnSignals()
        defer { signals.forEach { $0.cancel() } }
        var players: [PatternPlayer] = []
        var abort: AbortButton?
        do {
            let backend = try GPIOLibrary.load(library)
            if let info = backend.library {
                struct Library: Encodable { var library = "libgpiod"; var version: String; var api: String; var soname: String }
                emit("library", Library(version: info.version, api: info.api.rawValue, soname: info.soname))
            }
            let gpio = try backend.openChip(chip)
            for line in outputs {
                let l = try gpio.requestOutput(line: line, consumer: consumer, activeLow: false, initiallyActive: false)
                emit("requested", Requested(direction: "output", line: l.description))
                let output: any LevelOutput = toneHz.map { ToggledTone(l, frequency: $0) } ?? LineOutput(l)
                players.append(PatternPlayer(name: "out\(players.count)", output: output))
            }
            if let button {
                let l = try gpio.requestEdges(line: button, consumer: consumer, bias: bias, activeLow: !activeHighButton,
                                              debounceMicroseconds: UInt32(clamping: max(0, debounceMs) * 1000))
                emit("requested", Requested(direction: "input", line: l.description, pressed: try l.read(),
                                            kernelDebounceUs: l.kernelDebounceMicroseconds))
                abort = try AbortButton(line: l, timings: timings)
            }
        } catch {
            printError(error.description)
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
        struct Edge: Encodable { var active: Bool; var tNs: Int64 }
        abort?.onRawEdge = { e in emit("edge", Edge(active: e.active, tNs: e.timestampNanoseconds)) }
        abort?.start { e in emit(e) }
        if let played { for p in players { p.play(played) } }
        emit("ready", Stamp())
        let end = MonotonicClock.nanoseconds() + duration.nanoseconds
        while !stop.load(ordering: .acquiring), MonotonicClock.nanoseconds() < end {
            MonotonicClock.sleep(until: min(end, MonotonicClock.nanoseconds() + 20_000_000))
        }
        abort?.stop()
        players.forEach { $0.stop() }
    }
}

/// `countdown` or `ON/OFF[xCOUNT][+PAUSE]` (ms).
func parsePattern(_ text: String, patterns: AlarmPatterns) throws -> OnOffPattern {
    if let sound = AlarmSound(rawValue: text) { return patterns.pattern(for: sound) }
    let bad = ValidationError("pattern '\(text)': expected a sound name or ON/OFF[xCOUNT][+PAUSE] in ms")
    let plus = text.split(separator: "+", omittingEmptySubsequences: false)
    let times = plus[0].split(separator: "x", omittingEmptySubsequences: false)
    let onOff = times[0].split(separator: "/", omittingEmptySubsequences: false)
    guard plus.count <= 2, times.count <= 2, onOff.count == 2,
          let on = Int(onOff[0]), let off = Int(onOff[1]),
          let count = times.count == 2 ? Int(times[1]) : 1,
          let pause = plus.count == 2 ? Int(plus[1]) : 0 else { throw bad }
    let p = OnOffPattern(onMs: on, offMs: off, count: count, pauseMs: pause)
    if let problem = p.problems(at: ["pattern"]).first { throw ValidationError(problem.description) }
    return p
}

/// A line requested: `pressed` and the kernel's debounce for an input.
private struct Requested: Encodable {
    var direction: String
    var line: String
    var pressed: Bool?
    var kernelDebounceUs: UInt32?
}

/// A debounced button event as its JSON line.
func emit(_ e: ButtonEvent) {
    struct Released: Encodable { var tNs: Int64; var durationMs: Double; var press: String }
    switch e {
    case let .pressed(t): emit("pressed", Stamp(tNs: t))
    case let .held(t): emit("held", Stamp(tNs: t))
    case let .released(t, d, long): emit("released", Released(tNs: t, durationMs: Double(d) / 1e6, press: long ? "long" : "short"))
    }
}
