/// Something the alert engine is told.
public enum AlertInput: Sendable, Equatable {
    /// The detector suspects a fall.
    case fallSuspected(FallSuspected)
    /// The button went down (an edge already debounced by the GPIO layer).
    case buttonPressed
    /// The button came up. The engine decides short or long from how long it was held.
    case buttonReleased
    /// A caregiver acknowledged an alert through a notifier.
    case acknowledged(incidentID: String, by: String)
    /// The sensor became faulty (or reports another fault while faulty).
    case sensorFault(SensorFault)
    /// The sensor works again.
    case sensorRecovered
    /// The sensor side's hint about walking; only matters during a countdown.
    case wearerActivity(walking: Bool)
    /// The sensor side's ``RecoveryWatch``: the wearer is up again, `after` seconds after the
    /// impact. During a fall's countdown it ends as a recovered fall (``AlertKind/recoveredFall``).
    case wearerUp(after: Double)
    /// A message of the active alarm was accepted by its provider or receiver: the wearer hears
    /// that it went out.
    case alertDelivered(incidentID: String)
    /// A caregiver answered the alarm's call (a person, not a voicemail).
    case contactReached(incidentID: String, by: String)
    /// An alarm (fall or help request) a previous process dispatched and nobody resolved, found
    /// at start: while monitoring, the engine takes it over as the active alert without sending
    /// it again (alarm sound, acknowledgements and the wearer's press end it as usual).
    case alertResumed(Alert)
    /// Whether alerts may not reach anyone (the outbox cannot take them, a channel cannot
    /// start, a part of the daemon stalled): while they may not, the LED shows the fault pattern
    /// in place of the monitoring heartbeat.
    case deliveryTrouble(Bool)
    /// The wear watch's verdict: only the sensor's own noise since `since` (the device lies
    /// somewhere, not on the wearer: falls cannot be detected on it).
    case notWorn(since: Double)
    /// The device moves again after ``notWorn(since:)``.
    case wornAgain
    /// A later step of the call a staff station accepted (presence at the bedside, reset),
    /// taken at the station by `by` and proven as its acknowledgement was (issue 37 item 4). It
    /// is recorded on the accepted incident alone and never ends or silences an alarm.
    case stationStep(incidentID: String, step: CallStep, by: String)
}

/// A step of a nurse call after it was accepted (`accepted → presence → reset`), as a staff
/// station sends it to the bridge.
public enum CallStep: String, Sendable, Equatable, CaseIterable {
    /// A member of staff is at the bedside ("I'm here").
    case presence
    /// The call is over ("Reset (done)").
    case reset
}

/// Something the caller must do, in the order given.
public enum AlertEffect: Sendable, Equatable {
    /// Play this buzzer pattern (see ``AlarmSound/isOneShot``).
    case sound(AlarmSound)
    /// Show this on the status LED.
    case indicator(StatusIndicator)
    /// Hand this alert to the notifiers (through the durable outbox).
    case dispatch(Alert)
    /// Append this to the incident log.
    case record(IncidentEvent)
    /// A countdown began: store its fall alert now (due at `deadline`, engine time), so that it
    /// goes out even if the process dies before the countdown ends.
    case arm(Alert, deadline: Double)
    /// The armed countdown ended without its fall alert (aborted, cancelled, replaced by a
    /// help request): cancel the stored alert.
    case disarm(incident: String, reason: String)
}

/// The alarm's state in one vocabulary, for everything that shows it: the MQTT state topic,
/// the status file, the metrics and the console. An incident in progress comes first; a sensor
/// fault shows while there is none (the LED alone lets a fault override everything, see
/// ``AlertEngine/indicator``: the buzzer tells the wearer about the incident).
public enum AlarmStatus: String, Sendable, Equatable, Codable, CaseIterable {
    case monitoring
    case countdown
    case alertOut = "alert-out"
    case sensorFault = "sensor-fault"

    /// The `fallguard_alarm_state` gauge: 0 monitoring (a sensor fault has its own gauge),
    /// 1 countdown, 2 alert out.
    public var gaugeValue: Int {
        switch self {
        case .monitoring, .sensorFault: 0
        case .countdown: 1
        case .alertOut: 2
        }
    }
}

/// Where the engine is with the wearer. Sensor faults are tracked beside it
/// (``AlertEngine/sensorFault``) because they can overlap any of these.
public enum AlertState: Sendable, Equatable {
    /// No incident: watching.
    case monitoring
    /// A fall is suspected; the alert goes out at the deadline unless the wearer aborts.
    case countdown(Countdown)
    /// An alert went out; the calm alarm continues until "I'm OK", an acknowledgement or the timeout.
    case alertActive(Active)

    public struct Countdown: Sendable, Equatable {
        public let incident: String
        /// When the countdown started.
        public let started: Double
        /// When the fall alert goes out.
        public let deadline: Double
        /// When the final phase starts (`deadline - finalPhase`).
        public let finalPhaseStart: Double
        /// The detection that started it.
        public let fall: FallSuspected
        public internal(set) var inFinalPhase: Bool
        public internal(set) var wearerResumedWalking: Bool

        /// Seconds left at `now`, never negative: what a console display shows.
        public func remaining(at now: Double) -> Double { max(0, deadline - now) }

        /// The fall alert this countdown sends when it is not aborted, decided at `time`.
        public func fallAlert(at time: Double) -> Alert {
            Alert(kind: .fall, incident: incident, time: time, fall: fall, wearerResumedWalking: wearerResumedWalking)
        }
    }

    public struct Active: Sendable, Equatable {
        public let incident: String
        /// ``AlertKind/fall`` or ``AlertKind/helpRequested``: the last alarm dispatched.
        public let kind: AlertKind
        /// When that alarm was dispatched.
        public let dispatchedAt: Double
        /// When the engine gives up and returns to monitoring.
        public let timeoutDeadline: Double
        public let fall: FallSuspected?
        public let wearerResumedWalking: Bool
        /// A message of this alarm went out (a provider or receiver accepted it).
        public var delivered = false
        /// Who answered the alarm's call, when someone did.
        public var reachedBy: String?
    }

    /// The incident under way, if any.
    public var incident: String? {
        switch self {
        case .monitoring: nil
        case let .countdown(c): c.incident
        case let .alertActive(a): a.incident
        }
    }
}

/// The alert state machine: what happens between "the detector suspects a fall" and "the
/// helpers know". Pure logic driven by inputs and a virtual clock, so a test can replay a
/// whole day in milliseconds; the runtime performs the returned ``AlertEffect``s.
///
/// ## States and transitions
///
/// ```
/// monitoring ──fall──▶ countdown ──deadline──▶ alert-active ──short press──▶ monitoring (resolved-by-wearer)
///     ▲                 │   │  └─walking + auto-cancel─▶ monitoring           ──acknowledgement──▶ monitoring (acknowledged)
///     │                 │   └─short press─▶ monitoring (false alarm)        ──active timeout──▶ monitoring
///     └─────────────────┴─── long press from any state ──▶ alert-active (help-requested)
/// ```
///
/// - **monitoring**: a suspected fall opens a new incident `<prefix>-<n>` and starts the
///   countdown (sound ``AlarmSound/countdown``, LED ``StatusIndicator/countdown``). A short
///   press is ignored and recorded without an incident.
/// - **countdown**: `finalPhase` seconds before the deadline the sound becomes
///   ``AlarmSound/countdownFinal``. A short press aborts: a false alarm, recorded with the
///   detector's reasons, chirp ``AlarmSound/acknowledge`` then silence, nothing dispatched. At
///   the deadline the ``AlertKind/fall`` alert goes out. While a press that began during the
///   countdown is held, the deadline waits: within `longPress` seconds the press becomes an
///   abort or a help request, so a wearer who pressed at 29.5 s does not get a fall alert
///   followed by "I'm OK". Walking is noted in the alert, or cancels it with
///   `autoCancelWhenWalking`.
/// - **alert-active**: sound ``AlarmSound/alertActive``, LED ``StatusIndicator/alertOut``. A
///   short press dispatches ``AlertKind/resolvedByWearer``; an acknowledgement naming this
///   incident dispatches ``AlertKind/acknowledged`` (so the other helpers know); both chirp and
///   return to monitoring. After `alertTimeout` the engine returns to monitoring and records it.
/// - **long press**, in any state: when the press has lasted `longPress` seconds the
///   ``AlertKind/helpRequested`` alert goes out at once (for the running incident, if any, else
///   a new one) and the state becomes alert-active with a fresh timeout; the release does
///   nothing more.
/// - A suspected fall during a countdown or an active alert is recorded as a repeat detection
///   of the same incident; nothing restarts.
/// - **Sensor faults** run beside the states as their own incident `<prefix>-fault-<n>`: the
///   LED shows ``StatusIndicator/fault``; the buzzer plays ``AlarmSound/sensorFault`` only when
///   no incident runs. A fault outlasting `faultGrace` dispatches
///   ``AlertKind/deviceProblem`` once; recovery dispatches ``AlertKind/deviceRecovered`` only
///   after that. Sound and LED are always derived from the current state, so after recovery
///   they show whatever the wearer's state calls for by then.
///
/// ## Time
///
/// Every call passes the monotonic time in seconds. ``handle(_:at:)`` first fires every timer
/// due up to that time, in time order, each recorded at its own due time; the runtime calls
/// ``advance(to:)`` at ``nextDeadline`` between inputs. Time never goes backwards: an earlier
/// or non-finite time is taken as the engine's current ``clock``.
///
/// Effects are emitted only on change: the initial ``sound`` (silent) and ``indicator``
/// (monitoring) are for the runtime to set at start.
public struct AlertEngine: Sendable, Equatable {
    public let configuration: AlertConfiguration
    public private(set) var state: AlertState = .monitoring
    /// The sensor fault under way, if any.
    public private(set) var sensorFault: FaultEpisode?
    /// The continuous pattern the buzzer should be playing now.
    public private(set) var sound: AlarmSound = .silent
    /// What the LED should be showing now.
    public private(set) var indicator: StatusIndicator = .monitoring
    /// The engine's time: the latest time it was given; nil before the first call.
    public private(set) var clock: Double?
    /// The device is not worn (``AlertInput/notWorn(since:)``) and since when.
    public private(set) var notWorn: NotWornEpisode?
    /// Whether alerts may not reach anyone now (``AlertInput/deliveryTrouble(_:)``).
    public private(set) var deliveryTrouble = false
    /// The countdown whose fall alert is armed (see ``AlertEffect/arm(_:deadline:)``).
    public private(set) var armedIncident: String?
    /// The alarm a member of staff accepted through a station (issue 37): until presence is
    /// given, a new incident opens or `alertTimeout` passes, a long press is presence at the
    /// bedside, not a help request.
    public private(set) var accepted: AcceptedCall?

    /// An alarm accepted through a staff station (an acknowledgement `via` ``stationVia``).
    public struct AcceptedCall: Sendable, Equatable {
        public let incident: String
        /// Who accepted, as the acknowledgement named them (`Anna Smith (station)`).
        public let by: String
        public let at: Double
        /// Until when a long press is presence.
        public let until: Double
        /// When presence at the bedside was given (a long press, or "I'm here" at the station;
        /// nil: not yet), and by whom (nil: who accepted, by the button).
        public internal(set) var presentAt: Double?
        public internal(set) var presentBy: String?
        /// When the station reset the call (done), and by whom: its steps are over.
        public internal(set) var resetAt: Double?
        public internal(set) var resetBy: String?
    }

    /// How an acknowledgement from a staff station ends (``Acknowledgement/byAndVia``).
    public static let stationVia = " (station)"

    /// How long after a station's acceptance a long press is staff presence at the bedside
    /// (at most the active alert's timeout). Later it is the wearer's help request again: a
    /// resident still on the floor who holds the button because nobody came must not be taken
    /// for the nurse who accepted and was held up (her presence then comes from the page).
    public static let presenceWindow = 600.0

    /// The state in the one vocabulary every output shows.
    public var status: AlarmStatus {
        switch state {
        case .countdown: .countdown
        case .alertActive: .alertOut
        case .monitoring: sensorFault == nil ? .monitoring : .sensorFault
        }
    }

    private var press: Press?
    private var incidentsOpened = 0
    private var faultsOpened = 0

    /// A sensor fault from its start to its recovery.
    public struct FaultEpisode: Sendable, Equatable {
        /// `<prefix>-fault-<n>`.
        public let incident: String
        /// The latest fault reported.
        public internal(set) var fault: SensorFault
        public let since: Double
        /// When the ``AlertKind/deviceProblem`` alert goes out if the fault lasts.
        public let reportDeadline: Double
        /// Whether it went out.
        public internal(set) var reported: Bool
    }

    /// The device not worn, from the wear watch's verdict to the next movement.
    public struct NotWornEpisode: Sendable, Equatable {
        /// `<prefix>-fault-<n>` (numbered with the sensor faults).
        public let incident: String
        /// When only the sensor's noise began (before the verdict, which takes minutes).
        public let since: Double
        /// When the ``AlertKind/deviceProblem`` alert goes out if it lasts; nil: never
        /// (``AlertConfiguration/notWornAlert`` off).
        public let reportDeadline: Double?
        public internal(set) var reported: Bool
    }

    /// The button while it is down.
    private struct Press: Sendable, Equatable {
        let since: Double
        /// The incident running when it went down: a short press acts only on that one.
        let incident: String?
        var longPressFired: Bool
    }

    /// The timers, in the order they fire when due at the same instant: a help request first.
    private enum Timer {
        case longPress
        case finalPhase(AlertState.Countdown)
        case countdownExpiry(AlertState.Countdown)
        case alertTimeout(AlertState.Active)
        case faultReport(FaultEpisode)
        case notWornReport(NotWornEpisode)
    }

    /// - Parameter numbering: the incidents and fault episodes opened before (for example by
    ///   an earlier run, from its incident log); the next ones continue after them so that an
    ///   incident id never names two incidents.
    public init(configuration: AlertConfiguration, numbering: IncidentNumbering = .init()) {
        self.configuration = configuration
        incidentsOpened = numbering.incidents
        faultsOpened = numbering.faults
    }

    /// How many incidents and fault episodes have been opened: the engine's counters.
    public var numbering: IncidentNumbering { IncidentNumbering(incidents: incidentsOpened, faults: faultsOpened) }

    /// When the next timer is due: call ``advance(to:)`` then (or any later time). Always
    /// later than ``clock`` after a call returns; nil when nothing is pending.
    public var nextDeadline: Double? { nextTimer()?.time }

    /// Fires every timer due up to `now`, in time order.
    public mutating func advance(to now: Double) -> [AlertEffect] {
        var effects: [AlertEffect] = []
        fireTimers(through: setClock(now), into: &effects)
        updateArming(into: &effects)
        return effects
    }

    /// Advances to `now`, then applies the input.
    public mutating func handle(_ input: AlertInput, at now: Double) -> [AlertEffect] {
        var effects: [AlertEffect] = []
        let t = setClock(now)
        fireTimers(through: t, into: &effects)
        apply(input, at: t, into: &effects)
        fireTimers(through: t, into: &effects)  // e.g. a zero grace period
        updateArming(into: &effects)
        return effects
    }

    /// After each batch: a new countdown is armed with the fall alert its expiry will send; an
    /// armed one that ended without an alert for its incident is disarmed (one that ended with
    /// one, the expiry or a help request, is replaced by that alert).
    private mutating func updateArming(into effects: inout [AlertEffect]) {
        let countdown: AlertState.Countdown? = if case let .countdown(c) = state { c } else { nil }
        if let incident = armedIncident, incident != countdown?.incident {
            armedIncident = nil
            let dispatched = effects.contains { if case let .dispatch(a) = $0 { a.incident == incident } else { false } }
            if !dispatched {
                let why = effects.reversed().lazy.compactMap { e -> String? in
                    if case let .record(r) = e, r.incident == incident { "\(r.event.rawValue): \(r.detail)" } else { nil }
                }.first ?? "the countdown ended"
                effects.append(.disarm(incident: incident, reason: why))
            }
        }
        guard let c = countdown, armedIncident != c.incident else { return }
        armedIncident = c.incident
        effects.append(.arm(c.fallAlert(at: c.deadline), deadline: c.deadline))
    }

    // MARK: - Clock and timers

    private mutating func setClock(_ now: Double) -> Double {
        let t: Double
        if let c = clock {
            t = now.isFinite && now > c ? now : c
        } else {
            t = now.isFinite ? now : 0
        }
        clock = t
        return t
    }

    private func nextTimer() -> (time: Double, timer: Timer)? {
        var best: (time: Double, timer: Timer)?
        func consider(_ time: Double, _ timer: Timer) {
            if best.map({ time < $0.time }) ?? true { best = (time, timer) }
        }
        if let p = press, !p.longPressFired {
            consider(p.since + configuration.longPress, .longPress)
        }
        switch state {
        case .monitoring:
            break
        case let .countdown(c):
            if !c.inFinalPhase, configuration.finalPhase > 0 {  // 0: no final phase at all
                consider(c.finalPhaseStart, .finalPhase(c))
            }
            if !isHoldingExpiry(c) { consider(c.deadline, .countdownExpiry(c)) }
        case let .alertActive(a):
            consider(a.timeoutDeadline, .alertTimeout(a))
        }
        if let f = sensorFault, !f.reported {
            consider(f.reportDeadline, .faultReport(f))
        }
        if let n = notWorn, !n.reported, let deadline = n.reportDeadline {
            consider(deadline, .notWornReport(n))
        }
        return best
    }

    /// A press that began during this countdown decides it within `longPress` seconds.
    private func isHoldingExpiry(_ c: AlertState.Countdown) -> Bool {
        guard let p = press else { return false }
        return !p.longPressFired && p.incident == c.incident
    }

    private mutating func fireTimers(through t: Double, into effects: inout [AlertEffect]) {
        while let next = nextTimer(), next.time <= t {
            let time = next.time
            switch next.timer {
            case .longPress:
                press?.longPressFired = true
                requestHelp(at: time, into: &effects)
            case var .finalPhase(c):
                c.inFinalPhase = true
                state = .countdown(c)
                record(.finalPhase, c.incident, at: time,
                       "final \(seconds(c.deadline - time)) s of the countdown", into: &effects)
                updateOutputs(into: &effects)
            case let .countdownExpiry(c):
                activate(.fall, incident: c.incident, fall: c.fall, walking: c.wearerResumedWalking,
                         at: time, event: .countdownExpired,
                         detail: "not aborted within \(seconds(time - c.started)) s: fall alert sent"
                             + (c.wearerResumedWalking ? " (the wearer walked during the countdown)" : ""),
                         chirp: nil, into: &effects)
            case let .alertTimeout(a):
                state = .monitoring
                record(.activeTimedOut, a.incident, at: time,
                       "no \"I'm OK\" or acknowledgement \(seconds(time - a.dispatchedAt)) s after the \(a.kind.rawValue) alert; back to monitoring",
                       into: &effects)
                updateOutputs(into: &effects)
            case var .faultReport(f):
                f.reported = true
                sensorFault = f
                let alert = Alert(kind: .deviceProblem, incident: f.incident, time: time, sensorFault: f.fault)
                dispatch(alert, .deviceProblem, at: time,
                         "sensor faulty for \(seconds(time - f.since)) s: \(f.fault)", into: &effects)
            case var .notWornReport(n):
                n.reported = true
                notWorn = n
                let alert = Alert(kind: .deviceProblem, incident: n.incident, time: time, sensorFault: Self.notWornFault(since: n.since, at: time))
                dispatch(alert, .deviceProblem, at: time, "not worn for \(minutes(time - n.since)): the helpers are told", into: &effects)
            }
        }
    }

    // MARK: - Inputs

    private mutating func apply(_ input: AlertInput, at t: Double, into effects: inout [AlertEffect]) {
        switch input {
        case let .fallSuspected(fall):
            fallSuspected(fall, at: t, into: &effects)
        case .buttonPressed:
            // Edges come debounced, so a second press without a release does not happen; if it
            // does, the first press keeps its start time.
            if press == nil { press = Press(since: t, incident: state.incident, longPressFired: false) }
        case .buttonReleased:
            guard let p = press else { return }
            press = nil
            if !p.longPressFired { shortPress(p, at: t, into: &effects) }
        case let .acknowledged(id, by):
            acknowledged(id, by: by, at: t, into: &effects)
        case let .sensorFault(fault):
            sensorFaulted(fault, at: t, into: &effects)
        case .sensorRecovered:
            sensorRecovered(at: t, into: &effects)
        case let .wearerActivity(walking):
            wearerActivity(walking: walking, at: t, into: &effects)
        case let .wearerUp(after):
            wearerUp(after: after, at: t, into: &effects)
        case let .alertResumed(alert):
            resume(alert, at: t, into: &effects)
        case let .deliveryTrouble(trouble):
            deliveryTrouble = trouble
            updateOutputs(into: &effects)
        case let .notWorn(since):
            guard notWorn == nil else { return }
            faultsOpened += 1
            let start = min(since, t)
            let n = NotWornEpisode(incident: "\(configuration.incidentPrefix)-fault-\(faultsOpened)", since: start,
                                   reportDeadline: configuration.notWornAlert.map { start + $0 }, reported: false)
            notWorn = n
            record(.notWorn, n.incident, at: t, "only the sensor's own noise for \(minutes(t - start)): the device is not worn"
                   + (n.reportDeadline.map { "; the helpers are told if it lasts \(minutes($0 - start))" } ?? ""), into: &effects)
        case let .stationStep(id, step, who):
            stationStep(step, of: id, by: who, at: t, into: &effects)
        case .wornAgain:
            guard let n = notWorn else { return }
            notWorn = nil
            let detail = "worn again after \(minutes(t - n.since)) not worn"
            if n.reported {
                let alert = Alert(kind: .deviceRecovered, incident: n.incident, time: t, sensorFault: Self.notWornFault(since: n.since, at: t))
                dispatch(alert, .wornAgain, at: t, detail, into: &effects)
            } else {
                record(.wornAgain, n.incident, at: t, detail, into: &effects)
            }
        case let .alertDelivered(id):
            guard case var .alertActive(a) = state, a.incident == id, !a.delivered else { return }
            a.delivered = true
            state = .alertActive(a)
            record(.alertDelivered, id, at: t, "the \(a.kind.rawValue) alert went out \(seconds(t - a.dispatchedAt)) s after it was raised",
                   into: &effects)
            updateOutputs(into: &effects)
        case let .contactReached(id, who):
            guard case var .alertActive(a) = state, a.incident == id else { return }
            if !a.delivered { a.delivered = true }
            a.reachedBy = a.reachedBy ?? who
            state = .alertActive(a)
            record(.contactReached, id, at: t, "\(who) answered the call", into: &effects)
            updateOutputs(into: &effects)
        }
    }

    private mutating func fallSuspected(_ fall: FallSuspected, at t: Double, into effects: inout [AlertEffect]) {
        switch state {
        case .monitoring:
            incidentsOpened += 1
            accepted = nil
            let id = "\(configuration.incidentPrefix)-\(incidentsOpened)"
            let deadline = t + configuration.countdown
            state = .countdown(.init(
                incident: id, started: t, deadline: deadline,
                finalPhaseStart: deadline - configuration.finalPhase, fall: fall,
                inFinalPhase: configuration.finalPhase >= configuration.countdown,
                wearerResumedWalking: false))
            record(.fallSuspected, id, at: t,
                   "\(fall.detector): \(fall.reason); alert in \(seconds(configuration.countdown)) s unless aborted",
                   fall: fall, into: &effects)
            updateOutputs(into: &effects)
        case let .countdown(c):
            record(.repeatDetection, c.incident, at: t,
                   "detected again \(seconds(t - c.started)) s into the countdown; the countdown goes on",
                   fall: fall, into: &effects)
        case let .alertActive(a):
            record(.repeatDetection, a.incident, at: t,
                   "detected again while the \(a.kind.rawValue) alert is out", fall: fall, into: &effects)
        }
    }

    private mutating func shortPress(_ p: Press, at t: Double, into effects: inout [AlertEffect]) {
        switch state {
        case let .countdown(c) where c.incident == p.incident:
            state = .monitoring
            record(.falseAlarm, c.incident, at: t,
                   "aborted by the wearer \(seconds(t - c.started)) s into the countdown",
                   fall: c.fall, into: &effects)
            updateOutputs(chirp: .acknowledge, into: &effects)
        case let .alertActive(a) where a.incident == p.incident:
            state = .monitoring
            let alert = Alert(kind: .resolvedByWearer, incident: a.incident, time: t, fall: a.fall,
                              wearerResumedWalking: a.wearerResumedWalking)
            dispatch(alert, .resolvedByWearer, at: t,
                     "\"I'm OK\" pressed \(seconds(t - a.dispatchedAt)) s after the \(a.kind.rawValue) alert",
                     into: &effects)
            updateOutputs(chirp: .acknowledge, into: &effects)
        default:
            let why: String
            if let pressed = p.incident {
                why = "\(pressed), during which it began, has ended"
            } else if let now = state.incident {
                why = "it began before \(now)"
            } else {
                why = "no incident"
            }
            record(.pressIgnored, nil, at: t, "short press (\(seconds(t - p.since)) s) ignored: \(why)", into: &effects)
        }
    }

    private mutating func requestHelp(at t: Double, into effects: inout [AlertEffect]) {
        let incident: String, fall: FallSuspected?, walking: Bool, context: String
        switch state {
        case .monitoring:
            // A member of staff accepted the last alarm at a station: the long press is theirs,
            // at the bedside (the call's presence step), told to the station.
            if var a = accepted, a.presentAt == nil, a.resetAt == nil, t <= a.until {
                a.presentAt = t
                accepted = a
                record(.staffPresent, a.incident, at: t,
                       "presence at the bedside: button held \(seconds(configuration.longPress)) s, \(seconds(t - a.at)) s after \(a.by) accepted",
                       into: &effects)
                updateOutputs(chirp: .acknowledge, into: &effects)
                return
            }
            accepted = nil
            incidentsOpened += 1
            (incident, fall, walking) = ("\(configuration.incidentPrefix)-\(incidentsOpened)", nil, false)
            context = ""
        case let .countdown(c):
            (incident, fall, walking) = (c.incident, c.fall, c.wearerResumedWalking)
            context = " during the countdown; sent now instead of the fall alert"
        case let .alertActive(a):
            (incident, fall, walking) = (a.incident, a.fall, a.wearerResumedWalking)
            context = " while the \(a.kind.rawValue) alert was out"
        }
        activate(.helpRequested, incident: incident, fall: fall, walking: walking, at: t,
                 event: .helpRequested,
                 detail: "button held \(seconds(configuration.longPress)) s\(context): help requested",
                 chirp: .helpRequested, into: &effects)
    }

    private mutating func acknowledged(_ id: String, by who: String, at t: Double, into effects: inout [AlertEffect]) {
        switch state {
        case let .alertActive(a) where a.incident == id:
            state = .monitoring
            let alert = Alert(kind: .acknowledged, incident: id, time: t, fall: a.fall,
                              wearerResumedWalking: a.wearerResumedWalking, acknowledgedBy: who)
            dispatch(alert, .acknowledged, at: t,
                     "acknowledged by \(who) \(seconds(t - a.dispatchedAt)) s after the \(a.kind.rawValue) alert"
                         + (who.hasSuffix(Self.stationVia) ? "; a long press now is presence at the bedside" : ""),
                     into: &effects)
            accepted = who.hasSuffix(Self.stationVia)
                ? AcceptedCall(incident: id, by: who, at: t, until: t + min(configuration.alertTimeout, Self.presenceWindow)) : nil
            // The wearer hears that someone knows: not the short chirp of an abort.
            updateOutputs(chirp: .helpComing, into: &effects)
        case let .countdown(c) where c.incident == id:
            record(.acknowledgementIgnored, id, at: t,
                   "acknowledgement by \(who) before any alert went out; the countdown goes on", into: &effects)
        default:
            record(.acknowledgementIgnored, nil, at: t,
                   "acknowledgement of \(id) by \(who) ignored: not the active alert", into: &effects)
        }
    }

    /// A station's presence or reset, on the call it accepted: recorded (``accepted`` keeps who
    /// and when), the call's window for a long press as presence closed after either (a long press then is the wearer's help
    /// request again). Whatever the state, no alarm changes: the bridge's alert ended with the
    /// signed acceptance, and an alarm under way now is another incident.
    private mutating func stationStep(_ step: CallStep, of id: String, by who: String, at t: Double,
                                      into effects: inout [AlertEffect]) {
        guard var a = accepted, a.incident == id else {
            record(.acknowledgementIgnored, nil, at: t,
                   "\(step.rawValue) of \(id) by \(who) ignored: not the call a station accepted", into: &effects)
            return
        }
        guard a.resetAt == nil else {
            record(.acknowledgementIgnored, id, at: t, "\(step.rawValue) by \(who) ignored: the call was reset", into: &effects)
            return
        }
        switch step {
        case .presence:
            guard a.presentAt == nil else {
                record(.acknowledgementIgnored, id, at: t,
                       "presence by \(who) ignored: \(a.presentBy ?? a.by) was there already", into: &effects)
                return
            }
            (a.presentAt, a.presentBy) = (t, who)
            accepted = a
            record(.staffPresent, id, at: t, "presence at the bedside: \(who), \(seconds(t - a.at)) s after \(a.by) accepted",
                   into: &effects)
        case .reset:
            (a.resetAt, a.resetBy) = (t, who)
            accepted = a
            record(.staffReset, id, at: t,
                   "reset (done) by \(who), \(seconds(t - a.at)) s after \(a.by) accepted"
                       + (a.presentAt.map { ", \(seconds(t - $0)) s after presence" } ?? ""), into: &effects)
        }
    }

    private mutating func resume(_ alert: Alert, at t: Double, into effects: inout [AlertEffect]) {
        guard case .monitoring = state, alert.kind == .fall || alert.kind == .helpRequested else {
            record(.alertResumed, alert.incident, at: t,
                   "the \(alert.kind.rawValue) alert of a previous run is not taken over: \(state.incident ?? "no alarm") is under way",
                   into: &effects)
            return
        }
        state = .alertActive(.init(incident: alert.incident, kind: alert.kind, dispatchedAt: t,
                                   timeoutDeadline: t + configuration.alertTimeout,
                                   fall: alert.fall, wearerResumedWalking: alert.wearerResumedWalking))
        record(.alertResumed, alert.incident, at: t,
               "the \(alert.kind.rawValue) alert of a previous run is still out; taken over (not sent again)",
               fall: alert.fall, into: &effects)
        updateOutputs(into: &effects)
    }

    private mutating func sensorFaulted(_ fault: SensorFault, at t: Double, into effects: inout [AlertEffect]) {
        if var f = sensorFault {
            f.fault = fault
            sensorFault = f
            record(.sensorFault, f.incident, at: t, "still faulty: \(fault)", into: &effects)
            return
        }
        faultsOpened += 1
        let f = FaultEpisode(incident: "\(configuration.incidentPrefix)-fault-\(faultsOpened)", fault: fault,
                             since: t, reportDeadline: t + configuration.faultGrace, reported: false)
        sensorFault = f
        record(.sensorFault, f.incident, at: t,
               "\(fault); reported if it lasts \(seconds(configuration.faultGrace)) s", into: &effects)
        updateOutputs(into: &effects)
    }

    private mutating func sensorRecovered(at t: Double, into effects: inout [AlertEffect]) {
        guard let f = sensorFault else { return }  // nothing to recover from
        sensorFault = nil
        let detail = "sensor works again after \(seconds(t - f.since)) s"
        if f.reported {
            let alert = Alert(kind: .deviceRecovered, incident: f.incident, time: t, sensorFault: f.fault)
            dispatch(alert, .sensorRecovered, at: t, detail, into: &effects)
        } else {
            record(.sensorRecovered, f.incident, at: t, detail + ", within the grace period: not reported", into: &effects)
        }
        updateOutputs(into: &effects)
    }

    private mutating func wearerActivity(walking: Bool, at t: Double, into effects: inout [AlertEffect]) {
        guard case var .countdown(c) = state else { return }  // a hint; it only matters in a countdown
        guard walking else {
            record(.wearerStill, c.incident, at: t, "the wearer stopped walking", into: &effects)
            return
        }
        c.wearerResumedWalking = true
        if configuration.autoCancelWhenWalking {
            state = .monitoring
            record(.autoCancelled, c.incident, at: t,
                   "the wearer walked \(seconds(t - c.started)) s into the countdown: cancelled as a false alarm",
                   fall: c.fall, into: &effects)
            updateOutputs(chirp: .acknowledge, into: &effects)
        } else {
            state = .countdown(c)
            record(.wearerWalking, c.incident, at: t,
                   "the wearer walked \(seconds(t - c.started)) s into the countdown; noted in the alert",
                   into: &effects)
        }
    }

    /// Up again during a fall's countdown: a recovered fall. The alarm stops and the policy's
    /// recovered-fall contacts are told instead (the stored fall alert is replaced by it); the
    /// wearer can still hold the button for help. Outside a countdown (the alarm is out) it
    /// changes nothing: someone is already coming.
    private mutating func wearerUp(after: Double, at t: Double, into effects: inout [AlertEffect]) {
        guard case let .countdown(c) = state else { return }
        let into = seconds(t - c.started)
        guard configuration.recoveredFall else {
            record(.wearerUp, c.incident, at: t, "the wearer was up again \(seconds(after)) s after the fall, \(into) s into the countdown; "
                   + "the alarm goes on (alarm.recovered-fall: false)", into: &effects)
            return
        }
        state = .monitoring
        let alert = Alert(kind: .recoveredFall, incident: c.incident, time: t, fall: c.fall,
                          wearerResumedWalking: c.wearerResumedWalking, recoveredAfter: after)
        dispatch(alert, .recoveredFall, at: t,
                 "the wearer was up again \(seconds(after)) s after the fall, \(into) s into the countdown: told as a recovered fall, no alarm",
                 into: &effects)
        updateOutputs(chirp: .acknowledge, into: &effects)
    }

    // MARK: - Effects

    /// Enters alert-active for `incident` and dispatches the alarm.
    private mutating func activate(_ kind: AlertKind, incident: String, fall: FallSuspected?, walking: Bool,
                                   at t: Double, event: IncidentEvent.Kind, detail: String,
                                   chirp: AlarmSound?, into effects: inout [AlertEffect]) {
        state = .alertActive(.init(incident: incident, kind: kind, dispatchedAt: t,
                                   timeoutDeadline: t + configuration.alertTimeout,
                                   fall: fall, wearerResumedWalking: walking))
        let alert = Alert(kind: kind, incident: incident, time: t, fall: fall, wearerResumedWalking: walking)
        dispatch(alert, event, at: t, detail, into: &effects)
        updateOutputs(chirp: chirp, into: &effects)
    }

    /// The dispatch first (the one effect that must not be lost), then its log line.
    private func dispatch(_ alert: Alert, _ event: IncidentEvent.Kind, at t: Double, _ detail: String,
                          into effects: inout [AlertEffect]) {
        effects.append(.dispatch(alert))
        effects.append(.record(IncidentEvent(time: t, incident: alert.incident, event: event, detail: detail,
                                             alert: alert.kind, fall: alert.fall)))
    }

    private func record(_ event: IncidentEvent.Kind, _ incident: String?, at t: Double, _ detail: String,
                        fall: FallSuspected? = nil, into effects: inout [AlertEffect]) {
        effects.append(.record(IncidentEvent(time: t, incident: incident, event: event, detail: detail, fall: fall)))
    }

    /// Emits sound and LED changes for the current state; a one-shot `chirp` plays first and
    /// is always followed by the continuous pattern to return to.
    private mutating func updateOutputs(chirp: AlarmSound? = nil, into effects: inout [AlertEffect]) {
        let wantedSound: AlarmSound
        let wantedLED: StatusIndicator
        switch state {
        case let .countdown(c):
            wantedSound = c.inFinalPhase ? .countdownFinal : .countdown
            wantedLED = .countdown
        case let .alertActive(a):
            wantedSound = a.delivered ? .alertDelivered : .alertActive
            wantedLED = a.delivered ? .alertDelivered : .alertOut
        case .monitoring:
            wantedSound = sensorFault == nil ? .silent : .sensorFault
            wantedLED = .monitoring
        }
        if let chirp { effects.append(.sound(chirp)) }
        if chirp != nil || wantedSound != sound {
            effects.append(.sound(wantedSound))
            sound = wantedSound
        }
        let led: StatusIndicator = sensorFault != nil || (deliveryTrouble && wantedLED == .monitoring) ? .fault : wantedLED
        if led != indicator {
            effects.append(.indicator(led))
            indicator = led
        }
    }
}

extension AlertEngine {
    /// The not-worn episode as the alert's fault: the messages' `{fault}`.
    static func notWornFault(since: Double, at t: Double) -> SensorFault {
        SensorFault(.notWorn, device: "the wearer's device", detail: "only the sensor's own noise for \(minutes(t - since))")
    }
}

/// `47 min`, `2 h 5 min`: a long duration for messages, without Foundation.
private func minutes(_ s: Double) -> String {
    let m = Int((max(0, s) / 60).rounded())
    return m < 60 ? "\(m) min" : "\(m / 60) h\(m % 60 == 0 ? "" : " \(m % 60) min")"
}

/// `30`, `29.9`, `1.99`: seconds for log lines, without Foundation.
private func seconds(_ s: Double) -> String {
    var text = formatNumber(s)
    guard text.contains(".") else { return text }
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}
