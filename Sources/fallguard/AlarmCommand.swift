import ArgumentParser
import FallGuardConfig
import FallGuardConfigKeys
import FallGuardCore
import FallGuardDaemon
import FallGuardFieldTest
import FallGuardHardware
import Foundation
import Logging

struct AlarmCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alarm",
        abstract: "The local alarm: detector → countdown on the buzzer → abort button → alert.",
        discussion: """
            Falls come from --recording (a CSV replayed at its own pace), from the accelerometer \
            (--uri, e.g. local:) or from nowhere (no option: the button still sends help requests). \
            A suspected fall starts the countdown; a short press aborts it; at expiry the alert goes \
            to standard output as a JSON line ({"event":"alert",...}) and the calm alarm continues \
            until a short press ("I'm OK") or --alert-timeout. A long press is a help request at any \
            time. Every incident event is appended to <state>/incidents.jsonl.

            --buzzer console: the countdown, the pattern and the LED on one status line (standard \
            error, when it is a terminal) and the keyboard as the button: \(ConsoleButton.help) \
            (Enter/space/h; space is held while its autorepeat runs). Without a terminal on \
            standard input there is no button. --buzzer gpio: the buzzer, button and optional LED \
            through libgpiod (lines by name or offset; a missing or busy line stops start-up, exit 69).

            Standard output, one JSON line each: ready, fall-suspected (t_ns: CLOCK_MONOTONIC when \
            the detector fired), alert, sensor fault/recovered, summary.
            """)

    @Option(help: ArgumentHelp("Replay this recording (CSV) as the sensor, in real time.", valueName: "file"))
    var recording: String?

    @Option(help: ArgumentHelp("Use the accelerometer at this libiio URI (e.g. local:).", valueName: "uri"))
    var uri: String?

    @Option(help: "IIO device name (with --uri).")
    var device: String?

    @Option(help: "Buzzer, LED and button: console, gpio or none.")
    var buzzer = Word<RawWords<AlarmOutputs.Kind>>(.console)

    @Option(help: ArgumentHelp("Directory for incidents.jsonl.", valueName: "dir"))
    var state = "fallguard-state"

    @Option(help: "Seconds to run (default: until Ctrl-C).")
    var duration: Seconds?

    @OptionGroup var alarm: AlarmOptions
    @OptionGroup var gpio: GPIOOptions
    @OptionGroup var detectorOptions: DetectorOptions

    func run() throws {
        // Standard output is JSON lines. On a terminal the console display prints the incident
        // events itself, between its status line redraws, so only warnings are logged there.
        let quiet = buzzer.value == .console && isatty(2) == 1
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = quiet ? .warning : .info
            return h
        }
        let settings = alarm.section
        let gpioSection = try gpio.section()
        let problems = settings.problems(at: ["alarm"]) + gpioSection.problems(at: ["gpio"])
        if let p = problems.first { throw ValidationError(p.description) }
        let detector = try detectorOptions.configuration().makeDetector()
        let log: IncidentLog
        do { log = try IncidentLog(stateDirectory: state) } catch {
            printError("\(error)")
            throw ExitStatus.cantCreate
        }
        let kind = buzzer.value
        // The sensor: the recording through the same loop as a live one (resampled to 40 Hz,
        // health-checked), the accelerometer, or none.
        let source: (any SampleSource)?
        do {
            if let recording {
                source = try ReplaySource.file(recording)
            } else {
                source = uri.map { AccelerometerSource(configuration: AccelerometerConfiguration(uri: $0, device: device)) }
            }
            let local = try LocalAlarm(alarm: settings, gpio: gpioSection, outputs: kind, sink: ConsoleAlertSink(write: emit),
                                       incidentLog: log, logger: Logger(label: "fallguard.alarm"))
            try run(local, source: source, incidents: log.path, detector: detector)
        } catch let error as DaemonStartError {
            printError(error.description)
            throw ExitCode(error.status)
        }
    }

    private func run(_ local: LocalAlarm, source: (any SampleSource)?, incidents: String, detector: any FallDetector) throws {
        let controller = local.controller
        let (stop, signals) = stopOnSignals()
        defer { signals.forEach { $0.cancel() } }
        local.start()
        struct Ready: Encodable { var tNs = MonotonicClock.nanoseconds(); var incidents: String }
        emit("ready", Ready(incidents: incidents))
        let until = duration.map { MonotonicClock.nanoseconds() + $0.nanoseconds }
        let keepGoing = { !stop.load(ordering: .acquiring) && until.map { MonotonicClock.nanoseconds() < $0 } ?? true }
        if let source {
            let loop = SensorLoop(source: source, detector: detector)
            var name = device ?? (recording ?? "accelerometer")
            // As the daemon (`WearWatch`): walking, not worn and the wearer up again reach the alarm.
            let wear = WearWatch(alarm: controller, notWornAlert: controller.alertConfiguration.notWornAlert)
            source.start()
            loop.run(while: keepGoing, prepare: { $0.onDetectorSample = wear.process }) { output in
                switch output {
                case let .opened(info): name = "\(info.id) (\(info.name))"
                case let .health(change):
                    struct Health: Encodable { var problem: String; var tNs = MonotonicClock.nanoseconds() }
                    emit(change.isFault ? "fault" : "recovered", Health(problem: change.problem.rawValue))
                    controller.sensorHealth(change, device: name)
                case let .detection(fall):
                    struct Suspected: Encodable { var tNs = MonotonicClock.nanoseconds(); var impact: Double; var peak: Double; var reason: String }
                    emit("fall-suspected", Suspected(impact: fall.impactTime, peak: fall.peak, reason: fall.reason))
                    wear.fallDetected(fall)
                    controller.fallSuspected(fall)
                }
            }
            source.stopAndWait()
        } else {
            while keepGoing() { MonotonicClock.sleep(until: MonotonicClock.nanoseconds() + 20_000_000) }
        }
        local.stop()
        let s = controller.snapshot
        struct Summary: Encodable { var state: String; var sound: String }
        emit("summary", Summary(state: s.state.incident ?? "monitoring", sound: s.sound.rawValue))
    }
}

/// The `alarm` section's timings as options, with its defaults.
struct AlarmOptions: ParsableArguments {
    @Option(help: "Countdown in seconds (5...300).")
    var countdown = AlarmSection.defaults.countdown
    @Option(help: "Seconds of faster beeping at the end of the countdown.")
    var finalPhase = AlarmSection.defaults.finalPhase
    @Option(help: "Seconds held for a long press (help request).")
    var longPress = AlarmSection.defaults.longPress
    @Option(help: "Button debounce in ms.")
    var debounceMs = AlarmSection.defaults.debounceMs
    @Option(help: "Seconds the calm alarm lasts after an alert (60...86400).")
    var alertTimeout = AlarmSection.defaults.alertTimeout
    @Option(help: "Seconds a sensor fault may last before a device-problem alert.")
    var faultGrace = AlarmSection.defaults.faultGrace

    var section: AlarmSection {
        var s = AlarmSection.defaults
        s.countdown = countdown
        s.finalPhase = min(finalPhase, countdown)
        s.longPress = longPress
        s.debounceMs = debounceMs
        s.alertTimeout = alertTimeout
        s.faultGrace = faultGrace
        return s
    }
}

/// The `gpio` section as options, with its defaults.
struct GPIOOptions: ParsableArguments {
    private static let wiring = GPIOSection.defaults.wiring

    @Option(help: "libgpiod: auto (libgpiod.so.3 if present, else libgpiod.so.2), v1 (1.6) or v2 (2.x).")
    var gpioLibrary = Word<RawWords<GPIOLibraryChoice>>(GPIOSection.defaults.library)
    @Option(help: "GPIO chip: name, label or /dev path.")
    var chip = Self.wiring.chip
    @Option(help: "Buzzer line (name or offset).")
    var buzzerLine = Self.wiring.buzzer.line
    @Flag(help: "Passive buzzer: play a tone (toggled line, or --pwm-chip).")
    var passive = false
    @Option(help: "Tone of a passive buzzer in Hz.")
    var toneHz = Self.wiring.buzzer.toneHz
    @Option(help: "PWM chip under /sys/class/pwm for a passive buzzer (channel --pwm-channel).")
    var pwmChip: Int?
    @Option(help: "PWM channel.")
    var pwmChannel = Self.wiring.buzzer.pwmChannel
    @Option(help: "Button line (name or offset).")
    var buttonLine = Self.wiring.button.line
    @Option(help: "Button bias: pull-up, pull-down, disable, as-is.")
    var buttonBias = Word<BiasWords>(Self.wiring.button.bias)
    @Flag(help: "The button reads high when pressed (default: active-low).")
    var activeHighButton = false
    @Option(help: "Status LED line (default: none).")
    var ledLine: String?

    func section() throws -> GPIOSection {
        let (bias, library) = (buttonBias.value, gpioLibrary.value)
        var s = GPIOSection.defaults
        s.library = library
        s.wiring.chip = chip
        s.wiring.buzzer = BuzzerWiring(line: buzzerLine, type: passive ? .passive : .active, toneHz: toneHz,
                                       pwmChip: pwmChip, pwmChannel: pwmChannel, activeLow: Self.wiring.buzzer.activeLow)
        s.wiring.button = ButtonWiring(line: buttonLine, bias: bias, activeLow: !activeHighButton)
        s.wiring.led = ledLine.map { LEDWiring(line: $0, activeLow: GPIOSection.ledActiveLowDefault) }
        return s
    }
}
