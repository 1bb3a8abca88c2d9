/// One line of an incident's event log, produced by ``AlertEngine`` as
/// ``AlertEffect/record(_:)``. The caller writes it as a JSON line, e.g.
/// `{"time":30,"incident":"FG-1","event":"countdown-expired","detail":"…","alert":"fall"}`
/// (nil fields are left out).
public struct IncidentEvent: Sendable, Equatable, Codable {
    /// What happened.
    public enum Kind: String, Sendable, Equatable, Codable, CaseIterable {
        /// A suspected fall started a countdown (a new incident).
        case fallSuspected = "fall-suspected"
        /// The detector fired again during a countdown or an active alert; nothing restarts.
        case repeatDetection = "repeat-detection"
        /// The countdown entered its final phase; the buzzer speeds up.
        case finalPhase = "final-phase"
        /// The sensor side says the wearer walks again (noted in the alert).
        case wearerWalking = "wearer-walking"
        /// The sensor side says the wearer stopped walking.
        case wearerStill = "wearer-still"
        /// The wearer aborted the countdown with a short press: a false alarm.
        case falseAlarm = "false-alarm"
        /// The countdown was cancelled because the wearer walked (`autoCancelWhenWalking`).
        case autoCancelled = "auto-cancelled"
        /// Nobody aborted: the fall alert went out.
        case countdownExpired = "countdown-expired"
        /// The wearer was up again during the countdown: told as a recovered fall, no alarm.
        case recoveredFall = "recovered-fall"
        /// The wearer was up again, but the configuration keeps the alarm (noted in the log).
        case wearerUp = "wearer-up"
        /// A long press: the help request went out.
        case helpRequested = "help-requested"
        /// A short press while the alert was out: "I'm OK".
        case resolvedByWearer = "resolved-by-wearer"
        /// A message of the active alarm went out (accepted by a provider or receiver).
        case alertDelivered = "alert-delivered"
        /// A caregiver answered the alarm's call.
        case contactReached = "contact-reached"
        /// A caregiver acknowledged the active alert.
        case acknowledged
        /// After a station's acknowledgement, a long press, or "I'm here" taken at the station:
        /// staff present at the bedside.
        case staffPresent = "staff-present"
        /// A station's reset of the call it accepted: done, the call is over.
        case staffReset = "staff-reset"
        /// At start, an alarm a previous run dispatched and nobody resolved became the active
        /// alert again (or, with another incident under way, was not taken over).
        case alertResumed = "alert-resumed"
        /// Nobody resolved the active alert within the active timeout; back to monitoring.
        case activeTimedOut = "active-timed-out"
        /// A short press that had no incident to act on.
        case pressIgnored = "press-ignored"
        /// An acknowledgement that matched no active alert.
        case acknowledgementIgnored = "acknowledgement-ignored"
        /// The sensor became faulty, or reported another fault while faulty.
        case sensorFault = "sensor-fault"
        /// The fault outlasted the grace period: the device-problem alert went out.
        case deviceProblem = "device-problem"
        /// The sensor works again.
        case sensorRecovered = "sensor-recovered"
        /// Only the sensor's own noise for minutes: the device is not worn.
        case notWorn = "not-worn"
        /// The device moves again after it was not worn.
        case wornAgain = "worn-again"
    }

    /// When it happened, on the engine's monotonic clock, in seconds. Timers are recorded at
    /// the time they were due, even when ``AlertEngine/advance(to:)`` is called later.
    public var time: Double
    /// The incident it belongs to; nil when it belongs to none (a press while monitoring,
    /// an acknowledgement that matches nothing).
    public var incident: String?
    public var event: Kind
    /// One sentence for a person reading the log.
    public var detail: String
    /// The alert this event dispatched, if any.
    public var alert: AlertKind?
    /// The detector's reasons, for events about a detection (including false alarms, which is
    /// what a field tester tuning the detector wants to see).
    public var fall: FallSuspected?

    public init(time: Double, incident: String?, event: Kind, detail: String,
                alert: AlertKind? = nil, fall: FallSuspected? = nil) {
        self.time = time
        self.incident = incident
        self.event = event
        self.detail = detail
        self.alert = alert
        self.fall = fall
    }
}

/// The highest incident and fault-episode numbers used under one prefix (`FG-7`,
/// `FG-fault-2`), so that a new run continues after them.
public struct IncidentNumbering: Sendable, Equatable {
    public var incidents: Int
    public var faults: Int

    public init(incidents: Int = 0, faults: Int = 0) { (self.incidents, self.faults) = (incidents, faults) }

    /// Takes the larger numbers of `id` when it is `<prefix>-<n>` or `<prefix>-fault-<n>`.
    public mutating func include(_ id: String, prefix: String) {
        guard id.hasPrefix(prefix + "-") else { return }
        let rest = id.dropFirst(prefix.count + 1)
        if rest.hasPrefix("fault-"), let n = Int(rest.dropFirst(6)) {
            faults = max(faults, n)
        } else if let n = Int(rest) {
            incidents = max(incidents, n)
        }
    }
}
