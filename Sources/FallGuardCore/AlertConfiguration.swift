/// The timings and choices of ``AlertEngine``, checked when made. All durations are seconds.
///
/// Keys in errors (`countdown`, `long-press`, …) are the names a configuration file uses.
public struct AlertConfiguration: Sendable, Equatable {
    /// Allowed countdown lengths: long enough to reach the button, short enough to matter.
    public static let countdownRange: ClosedRange<Double> = 5...300
    /// Allowed long-press thresholds.
    public static let longPressRange: ClosedRange<Double> = 0.5...10
    /// Allowed alert-active timeouts: one minute to one day.
    public static let activeTimeoutRange: ClosedRange<Double> = 60...86_400
    /// Allowed sensor-fault grace periods; 0 reports a fault at once.
    public static let sensorFaultGraceRange: ClosedRange<Double> = 0...3_600

    /// From a suspected fall to the alert, unless the wearer aborts (key `countdown`, default 30).
    public let countdown: Double
    /// A press held this long is a help request, sent the moment the threshold is reached
    /// (key `long-press`, default 2).
    public let longPress: Double
    /// The last part of the countdown with the faster ``AlarmSound/countdownFinal`` pattern
    /// (key `final-phase`, default 10, 0 to `countdown`; 0 means none).
    public let finalPhase: Double
    /// How long the calm alarm continues after an alert went out without "I'm OK" or an
    /// acknowledgement (key `active-timeout`, default 3600).
    public let activeTimeout: Double
    /// How long a sensor fault may last before the helpers are told (key `sensor-fault-grace`,
    /// default 60). Short faults (a reconnect) only sound and record.
    public let sensorFaultGrace: Double
    /// Cancel the countdown as a false alarm when the wearer walks again
    /// (key `auto-cancel-when-walking`, default false: walking is only noted in the alert).
    public let autoCancelWhenWalking: Bool
    /// Starts every incident id, e.g. `FG` gives `FG-1`, `FG-2`, `FG-fault-1`
    /// (key `incident-prefix`, default `FG`; ASCII letters, digits, `-`, `_`, at most 32).
    public let incidentPrefix: String

    /// Checks every value; throws naming the first key that is out of its range.
    public init(countdown: Double = 30, longPress: Double = 2, finalPhase: Double = 10,
                activeTimeout: Double = 3600, sensorFaultGrace: Double = 60,
                autoCancelWhenWalking: Bool = false,
                incidentPrefix: String = "FG") throws(AlertConfigurationError) {
        try Self.check("countdown", countdown, Self.countdownRange)
        try Self.check("long-press", longPress, Self.longPressRange)
        try Self.check("final-phase", finalPhase, 0...countdown)
        try Self.check("active-timeout", activeTimeout, Self.activeTimeoutRange)
        try Self.check("sensor-fault-grace", sensorFaultGrace, Self.sensorFaultGraceRange)
        let allowed = incidentPrefix.unicodeScalars.allSatisfy { c in
            c.isASCII && (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)
                          || c == "-" || c == "_")
        }
        // Ids travel in SMS, MQTT topics and file names: keep them plain.
        guard allowed, (1...32).contains(incidentPrefix.unicodeScalars.count) else {
            throw .invalidIncidentPrefix(incidentPrefix)
        }
        self.countdown = countdown
        self.longPress = longPress
        self.finalPhase = finalPhase
        self.activeTimeout = activeTimeout
        self.sensorFaultGrace = sensorFaultGrace
        self.autoCancelWhenWalking = autoCancelWhenWalking
        self.incidentPrefix = incidentPrefix
    }

    /// The defaults: 30 s countdown, 2 s long press, 10 s final phase, 1 h active timeout,
    /// 60 s sensor-fault grace, no auto-cancel, prefix `FG`.
    public static let `default`: AlertConfiguration = {
        do { return try AlertConfiguration() } catch { preconditionFailure("\(error)") }
    }()

    private static func check(_ key: String, _ value: Double, _ range: ClosedRange<Double>) throws(AlertConfigurationError) {
        guard value.isFinite, range.contains(value) else {
            throw .outOfRange(key: key, value: value, range: range, unit: "s")
        }
    }
}

/// Why an ``AlertConfiguration`` was refused; the description names the key.
public enum AlertConfigurationError: Error, Equatable, CustomStringConvertible {
    case outOfRange(key: String, value: Double, range: ClosedRange<Double>, unit: String)
    case invalidIncidentPrefix(String)

    /// The configuration key at fault.
    public var key: String {
        switch self {
        case let .outOfRange(key, _, _, _): key
        case .invalidIncidentPrefix: "incident-prefix"
        }
    }

    public var description: String {
        switch self {
        case let .outOfRange(key, value, range, unit):
            return "alert setting '\(key)' = \(value) \(unit) is outside \(range.lowerBound)...\(range.upperBound) \(unit)"
        case let .invalidIncidentPrefix(prefix):
            return "alert setting 'incident-prefix' = '\(prefix)' must be 1 to 32 ASCII letters, digits, '-' or '_'"
        }
    }
}
