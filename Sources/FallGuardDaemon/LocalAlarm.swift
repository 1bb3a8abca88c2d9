import FallGuardConfig
import FallGuardCore
import FallGuardHardware
import Logging

/// The local alarm as one part: its buzzer, LED and button (``AlarmOutputs``), the
/// ``AlarmController`` that runs the engine on them, the console display when the console
/// stands in for the hardware, and the spoken prompts. The one place it is assembled: `run`
/// (through ``Daemon``), `alarm`, `check-config` (the outputs only) and the tests.
///
/// ```swift
/// let alarm = try LocalAlarm(alarm: c.alarm, gpio: c.gpio, outputs: .gpio, sink: outbox, incidentLog: log,
///                            logger: logger, observers: [recorder.observe])
/// alarm.start()          // the alarm thread, the button, the display
/// alarm.controller.fallSuspected(fall)
/// alarm.stop()           // silenced, lines released
/// ```
public struct LocalAlarm: Sendable {
    public let controller: AlarmController
    public let outputs: AlarmOutputs

    /// Opens the outputs the configuration names (`check-config` uses this alone). A line
    /// that is missing or busy stops start-up with exit status 69 (EX_UNAVAILABLE).
    public static func outputs(_ kind: AlarmOutputs.Kind, alarm: AlarmSection, gpio: GPIOSection, logger: Logger,
                               backend: (any GPIOBackend)? = nil) throws(DaemonStartError) -> AlarmOutputs {
        do {
            return try AlarmOutputs.make(kind, gpio: gpio.wiring, library: gpio.library, button: alarm.buttonTimings,
                                         patterns: alarm.alarmPatterns, logger: logger, backend: backend)
        } catch {
            throw DaemonStartError(description: error.description, status: 69)
        }
    }

    /// The alarm on `outputs` (or on those `kind` opens): an `alarm` section the engine cannot
    /// take stops start-up with exit status 78. `observers` see every batch of effects on the
    /// alarm thread, after the display and the spoken prompts.
    /// `alert`: the engine's configuration when the caller already built it from `alarm`.
    public init(alarm: AlarmSection, alert built: AlertConfiguration? = nil, gpio: GPIOSection, outputs kind: AlarmOutputs.Kind,
                opened: AlarmOutputs? = nil, speech: SpeechSection? = nil, sink: any AlertSink, incidentLog: IncidentLog?,
                logger: Logger, observers: [@Sendable (AlertEngine, [AlertEffect]) -> Void] = []) throws(DaemonStartError) {
        let alert: AlertConfiguration
        if let built { alert = built } else {
            do throws(AlertConfigurationError) { alert = try alarm.alertConfiguration() } catch {
                throw DaemonStartError(description: "alarm: \(AlarmSection.message(for: error))", status: 78)
            }
        }
        let outputs: AlarmOutputs
        if let opened { outputs = opened } else { outputs = try Self.outputs(kind, alarm: alarm, gpio: gpio, logger: logger) }
        let controller = AlarmController(alert: alert, button: alarm.buttonTimings, patterns: alarm.alarmPatterns,
                                         buzzer: outputs.buzzer, led: outputs.led, button: outputs.button,
                                         sink: sink, incidentLog: incidentLog, logger: Logger(label: "fallguard.alarm"))
        let display = outputs.display
        let prompts = speech.flatMap { $0.enabled ? SpokenPrompts(settings: $0.settings) : nil }
        controller.onUpdate = { engine, effects in
            display?.update(engine, effects)
            prompts?.handle(effects)
            for observe in observers { observe(engine, effects) }
        }
        (self.controller, self.outputs) = (controller, outputs)
    }

    /// The alarm thread, the button and the console display.
    public func start() {
        controller.start()
        outputs.display?.start(controller)
    }

    /// Silences and releases everything ``start()`` began.
    public func stop() {
        outputs.display?.stop()
        controller.stop()
    }
}
