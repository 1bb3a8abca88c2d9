import FallGuardCore
import Foundation
import Logging

/// The local alarm: one ``AlertEngine`` wired to the buzzer, the status LED, the button, an
/// ``AlertSink`` and the incident log, on a dedicated thread.
///
/// ```swift
/// let alarm = AlarmController(alert: configuration, button: timings, patterns: patterns,
///                             buzzer: buzzer, led: led, button: button,
///                             sink: outbox, incidentLog: try IncidentLog(stateDirectory: state))
/// try alarm.start()
/// alarm.fallSuspected(detection)              // from the sensor loop
/// alarm.sensorHealth(change, device: "iio:device0 (adxl345)")
/// alarm.acknowledge(incident: "FG-3", by: "+4915…")   // from a notifier
/// alarm.stop()                                // silences the buzzer, releases the lines
/// ```
///
/// Inputs may come from any thread or task; they are stamped with CLOCK_MONOTONIC when they
/// arrive (button events with their kernel edge time) and handled in arrival order.
///
/// A debounced press reaches the controller only after the debounce time, stamped with the
/// edge that began it, and a press made just before the countdown ends must still abort it. So
/// a deadline is acted on ``hold`` (the debounce time plus 100 ms) after it is due, and an
/// input that would make it fire early (any input stamped after a due deadline) waits with it.
/// Inputs are stamped with their real times, so durations are exact: a press whose edge came
/// before the deadline aborts; one after it is too late. The thread
/// sleeps until the next input or the engine's ``AlertEngine/nextDeadline``. Effects are
/// performed sounds and indicators first (a one-shot, then the continuous pattern after it),
/// then dispatches to the sink and events to the log, each in the engine's order.
public final class AlarmController: @unchecked Sendable {
    // @unchecked: `engine`, `inbox`, `waiting`, `running`, `activeProblems`, `deliveryInTrouble` are guarded by `condition`.
    /// The engine's timings, checked.
    public let alertConfiguration: AlertConfiguration
    /// What the buzzer and LED play.
    public let patterns: AlarmPatterns
    private let buzzer: PatternPlayer?
    private let led: PatternPlayer?
    private let button: (any ButtonSource)?
    private let sink: any AlertSink
    private let incidentLog: IncidentLog?
    private let logger: Logger
    private let condition = MonotonicCondition()
    private var engine: AlertEngine
    private var inbox: [(AlertInput, Int64)] = []
    /// Inputs stamped after a deadline that is due but not yet acted on (see ``hold``).
    private var waiting: [(AlertInput, Int64)] = []
    private var running = false
    private var activeProblems: Set<SensorProblem> = []
    /// The last ``deliveryTrouble(_:)`` posted (only a change reaches the engine).
    private var deliveryInTrouble = false
    /// Seconds an armed alert waits past its countdown before the sink sends it by itself: the
    /// controller's ``hold``, a press held through the deadline (``AlertConfiguration/longPress``),
    /// and this margin for a slow alarm thread.
    public static let fallbackMargin = 5.0
    private let done = DispatchSemaphore(value: 0)
    /// How far the engine's clock runs behind CLOCK_MONOTONIC, in nanoseconds.
    public let hold: Int64
    /// Called on the alarm thread after each batch of effects, with the engine (console display).
    public var onUpdate: (@Sendable (AlertEngine, [AlertEffect]) -> Void)?
    /// Called on every pass of the alarm thread, at least every ``longestSleep`` seconds while it
    /// lives (the daemon's watchdog counts them).
    public var onPass: (@Sendable () -> Void)?
    /// The longest the alarm thread sleeps without a pass.
    public static let longestSleep = 4.0

    /// Nothing runs until ``start()``. `button` gives the debounce time, by which the engine's
    /// clock runs behind (see ``hold``).
    public init(alert: AlertConfiguration, button timings: ButtonTimings, patterns: AlarmPatterns,
                buzzer: PatternPlayer?, led: PatternPlayer?, button: (any ButtonSource)?,
                sink: any AlertSink, incidentLog: IncidentLog?, logger: Logger = Logger(label: "fallguard.alarm")) {
        alertConfiguration = alert
        self.patterns = patterns
        engine = AlertEngine(configuration: alert,
                             numbering: incidentLog?.numbering(prefix: alert.incidentPrefix) ?? .init())
        self.buzzer = buzzer
        self.led = led
        self.button = button
        self.sink = sink
        self.incidentLog = incidentLog
        self.logger = logger
        hold = Int64(timings.debounceMs + 100) * 1_000_000
    }

    /// Starts the alarm thread and the button, and shows the monitoring heartbeat.
    public func start() {
        let first = condition.withLock { () -> Bool in
            defer { running = true }
            return !running
        }
        guard first else { return }
        let indicator = condition.withLock { engine.indicator }   // the engine emits changes only
        led?.play(patterns.ledPattern(for: indicator))
        _ = startThread(name: "fallguard-alarm", realTime: true) { [self] in loop() }
        button?.start { [weak self] event in self?.button(event) }
    }

    /// Stops the button, the thread and both outputs (buzzer and LED off, lines released).
    public func stop() {
        button?.stop()
        let wasRunning = condition.withLock { () -> Bool in
            defer { running = false; condition.signal() }
            return running
        }
        if wasRunning { done.wait() }
        buzzer?.stop()
        led?.stop()
    }

    /// A copy of the engine now (state, countdown, sound, fault).
    public var snapshot: AlertEngine { condition.withLock { engine } }

    // MARK: - Inputs (any thread)

    /// The detector suspects a fall.
    public func fallSuspected(_ fall: FallSuspected) { post(.fallSuspected(fall)) }

    /// A caregiver acknowledged `incident` through a notifier.
    public func acknowledge(incident: String, by: String) { post(.acknowledged(incidentID: incident, by: by)) }

    /// A station took `step` on the call `incident` it accepted (recorded; no alarm changes).
    public func stationStep(_ step: CallStep, incident: String, by: String) {
        post(.stationStep(incidentID: incident, step: step, by: by))
    }

    /// A message of the alarm `incident` went out: the wearer hears that it was sent.
    public func delivered(incident: String) { post(.alertDelivered(incidentID: incident)) }

    /// `by` answered the alarm's call.
    public func reached(incident: String, by: String) { post(.contactReached(incidentID: incident, by: by)) }

    /// The sensor became faulty.
    public func sensorFault(_ fault: SensorFault) { post(.sensorFault(fault)) }

    /// The sensor works again.
    public func sensorRecovered() { post(.sensorRecovered) }

    /// Whether alerts may not reach anyone (the outbox cannot take them, a notifier is down):
    /// while they may not, the engine shows the fault pattern on the LED instead of the
    /// monitoring heartbeat. Called as often as it is checked; only a change is an input.
    public func deliveryTrouble(_ inTrouble: Bool) {
        let changed = condition.withLock { () -> Bool in
            defer { deliveryInTrouble = inTrouble }
            return deliveryInTrouble != inTrouble
        }
        if changed { post(.deliveryTrouble(inTrouble)) }
    }

    /// An alarm a previous process dispatched and nobody resolved (see ``AlertInput/alertResumed(_:)``).
    public func resume(_ alert: Alert) { post(.alertResumed(alert)) }

    /// The sensor side's ``RecoveryWatch``: the wearer is up again `after` seconds after the impact.
    public func wearerUp(after: Double) { post(.wearerUp(after: after)) }

    /// The sensor side's walking hint (a change only; it matters during a countdown).
    public func wearerActivity(walking: Bool) { post(.wearerActivity(walking: walking)) }

    /// The device lies still, not worn, since `since` (CLOCK_MONOTONIC seconds).
    public func notWorn(since: Double) { post(.notWorn(since: since)) }

    /// The device moves again after ``notWorn(since:)``.
    public func wornAgain() { post(.wornAgain) }

    /// A ``SensorPipeline`` health change: the first problem starts a fault, the end of the
    /// last one is the recovery.
    public func sensorHealth(_ change: SensorHealthChange, device: String) {
        let input: AlertInput? = condition.withLock {
            if change.isFault {
                activeProblems.insert(change.problem)
                return .sensorFault(SensorFault(change.problem, device: device, detail: change.detail))
            }
            guard activeProblems.remove(change.problem) != nil, activeProblems.isEmpty else { return nil }
            return .sensorRecovered
        }
        if let input { post(input) }
    }

    /// A debounced button event (from the configured ``ButtonSource``, or injected).
    public func button(_ event: ButtonEvent) {
        switch event {
        case let .pressed(t): post(.buttonPressed, at: t)
        case let .released(t, duration, long):
            logger.info("button released after \(Double(duration) / 1e6) ms (\(long ? "long" : "short") press)")
            post(.buttonReleased, at: t)
        case .held:
            logger.info("button held for the long-press time")
        }
    }

    private func post(_ input: AlertInput, at t: Int64 = MonotonicClock.nanoseconds()) {
        condition.withLock {
            inbox.append((input, t))
            condition.signal()
        }
    }

    // MARK: - The alarm thread

    private func loop() {
        defer { done.signal() }
        while true {
            let (effects, snapshot, keepRunning) = condition.withLock { () -> ([AlertEffect], AlertEngine, Bool) in
                if inbox.isEmpty, running {
                    let pass = MonotonicClock.nanoseconds() + Int64(Self.longestSleep * 1e9)
                    condition.wait(until: min(pass, engine.nextDeadline.map { Int64(($0 * 1e9).rounded(.up)) + hold } ?? pass))
                }
                var effects: [AlertEffect] = []
                let acted = Double(MonotonicClock.nanoseconds() - hold) * 1e-9   // deadlines due up to here fire
                let queue = waiting + inbox
                waiting.removeAll()
                inbox.removeAll()
                for (i, (input, t)) in queue.enumerated() {
                    let time = Double(t) * 1e-9
                    if let due = engine.nextDeadline, due <= time, due > acted {
                        waiting = Array(queue[i...])   // in arrival order, after the deadline fires
                        break
                    }
                    effects += engine.handle(input, at: time)
                }
                effects += engine.advance(to: acted)
                return (effects, engine, running)
            }
            onPass?()
            perform(effects)
            if !effects.isEmpty { onUpdate?(snapshot, effects) }
            guard keepRunning else { return }
        }
    }

    /// Sounds and LED first (posting to a player never blocks, and the buzzer must start within
    /// milliseconds of a detection), then dispatches and log lines in the engine's order (a
    /// log line is `fdatasync`ed, which can take milliseconds).
    private func perform(_ effects: [AlertEffect]) {
        for effect in effects {
            switch effect {
            case let .sound(sound):
                buzzer?.play(patterns.pattern(for: sound), oneShot: sound.isOneShot)
            case let .indicator(indicator):
                led?.play(patterns.ledPattern(for: indicator))
            case .dispatch, .record, .arm, .disarm:
                break
            }
        }
        for effect in effects {
            switch effect {
            case .sound, .indicator:
                break
            case let .arm(alert, deadline):
                arm(alert, deadline: deadline)
            case let .disarm(incident, reason):
                do { try sink.disarm(incident: incident, reason: reason) } catch {
                    logger.critical("\(incident): the held alert could NOT be cancelled (it will go out as a false alarm): \(error)")
                }
            case let .dispatch(alert):
                do {
                    try sink.deliver(alert)
                } catch {
                    logger.critical("alert \(alert.kind.rawValue) for \(alert.incident) NOT handed to the notifiers: \(error)")
                    try? incidentLog?.append(IncidentLog.DispatchFailed(incident: alert.incident, alert: alert.kind.rawValue, error: "\(error)"))
                }
            case let .record(event):
                logger.info("\(event.incident ?? "-") \(event.event.rawValue): \(event.detail)")
                do { try incidentLog?.append(event) } catch { logger.error("\(error)") }
            }
        }
    }
}

extension AlarmController {
    /// Stores a countdown's fall alert in the sink ahead of its end. A failure is logged; at
    /// expiry ``AlertSink/deliver(_:)`` stores the alert as it would without arming.
    private func arm(_ alert: Alert, deadline: Double) {
        // The engine acts on its deadline `hold` after CLOCK_MONOTONIC reaches it.
        let expiry = deadline - Double(MonotonicClock.nanoseconds() - hold) * 1e-9
        do {
            try sink.arm(alert, fallback: max(0, expiry) + alertConfiguration.longPress + Self.fallbackMargin)
        } catch {
            logger.error("\(alert.incident): the alert could not be stored ahead of the countdown's end (it will be at expiry): \(error)")
        }
    }
}
