/// The timings and choices of ``AlertEngine``, checked when made. All durations are seconds.
/// The configuration module gives the defaults and names the keys.
public struct AlertConfiguration: Sendable, Equatable {
    /// Allowed countdown lengths: long enough to reach the button, short enough to matter.
    public static let countdownRange: ClosedRange<Double> = 5...300
    /// Allowed long-press thresholds.
    public static let longPressRange: ClosedRange<Double> = 0.5...10
    /// Allowed alert-active timeouts: one minute to one day.
    public static let alertTimeoutRange: ClosedRange<Double> = 60...86_400
    /// Allowed times a device may lie unworn before the helpers are told: a minute (the wear
    /// watch's shortest verdict) to a day. The configuration asks for 5 minutes at least.
    public static let notWornAlertRange: ClosedRange<Double> = 60...86_400
    /// Allowed sensor-fault grace periods; 0 reports a fault at once.
    public static let faultGraceRange: ClosedRange<Double> = 0...3_600

    /// The values a configuration may get wrong, as ``AlertConfigurationError`` names them.
    public enum Setting: String, Sendable, Equatable, CaseIterable {
        case countdown, longPress, finalPhase, alertTimeout, faultGrace, incidentPrefix, notWornAlert
    }

    /// From a suspected fall to the alert, unless the wearer aborts.
    public let countdown: Double
    /// A press held this long is a help request, sent the moment the threshold is reached.
    public let longPress: Double
    /// The last part of the countdown with the faster ``AlarmSound/countdownFinal`` pattern
    /// (0 to `countdown`; 0 means none).
    public let finalPhase: Double
    /// How long the calm alarm continues after an alert went out without "I'm OK" or an
    /// acknowledgement.
    public let alertTimeout: Double
    /// How long a sensor fault may last before the helpers are told. Short faults (a
    /// reconnect) only sound and record.
    public let faultGrace: Double
    /// Cancel the countdown as a false alarm when the wearer walks again (false: walking is
    /// only noted in the alert).
    public let autoCancelWhenWalking: Bool
    /// End a fall's countdown as a recovered fall when the wearer is up again
    /// (``AlertInput/wearerUp(after:)``); false: the alarm goes out anyway.
    public let recoveredFall: Bool
    /// How long the device may lie unworn (only the sensor's noise) before the helpers get a
    /// device-problem alert; nil: never (the status still says it).
    public let notWornAlert: Double?
    /// Starts every incident id, e.g. `FG` gives `FG-1`, `FG-2`, `FG-fault-1` (ASCII letters,
    /// digits, `-`, `_`, at most 32).
    public let incidentPrefix: String

    /// Checks every value; throws naming the first setting that is out of its range.
    public init(countdown: Double, longPress: Double, finalPhase: Double, alertTimeout: Double,
                faultGrace: Double, autoCancelWhenWalking: Bool,
                incidentPrefix: String, notWornAlert: Double? = nil, recoveredFall: Bool = true) throws(AlertConfigurationError) {
        try Self.check(.countdown, countdown, Self.countdownRange)
        try Self.check(.longPress, longPress, Self.longPressRange)
        try Self.check(.finalPhase, finalPhase, 0...countdown)
        try Self.check(.alertTimeout, alertTimeout, Self.alertTimeoutRange)
        try Self.check(.faultGrace, faultGrace, Self.faultGraceRange)
        if let notWornAlert { try Self.check(.notWornAlert, notWornAlert, Self.notWornAlertRange) }
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
        self.alertTimeout = alertTimeout
        self.faultGrace = faultGrace
        self.autoCancelWhenWalking = autoCancelWhenWalking
        self.incidentPrefix = incidentPrefix
        self.notWornAlert = notWornAlert
        self.recoveredFall = recoveredFall
    }

    private static func check(_ setting: Setting, _ value: Double, _ range: ClosedRange<Double>) throws(AlertConfigurationError) {
        guard value.isFinite, range.contains(value) else {
            throw .outOfRange(setting, value: value, range: range, unit: "s")
        }
    }
}

/// Why an ``AlertConfiguration`` was refused. The configuration module words it with the
/// file's key; ``description`` names the property.
public enum AlertConfigurationError: Error, Equatable, CustomStringConvertible {
    case outOfRange(AlertConfiguration.Setting, value: Double, range: ClosedRange<Double>, unit: String)
    case invalidIncidentPrefix(String)

    /// The setting at fault.
    public var setting: AlertConfiguration.Setting {
        switch self {
        case let .outOfRange(setting, _, _, _): setting
        case .invalidIncidentPrefix: .incidentPrefix
        }
    }

    /// The message, naming the setting as `name` (a configuration key, an option).
    public func message(naming name: String) -> String {
        switch self {
        case let .outOfRange(_, value, range, unit):
            "alert setting '\(name)' = \(value) \(unit) is outside \(range.lowerBound)...\(range.upperBound) \(unit)"
        case let .invalidIncidentPrefix(prefix):
            "alert setting '\(name)' = '\(prefix)' must be 1 to 32 ASCII letters, digits, '-' or '_'"
        }
    }

    public var description: String { message(naming: setting.rawValue) }
}
