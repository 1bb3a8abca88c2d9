/// How urgent an alert is, in the three levels of the smart-home thesis. Notifiers choose their
/// channels by it (for example: call for `alarm`, message for `warning` and `information`).
public enum AlertSeverity: String, Sendable, Equatable, Codable, CaseIterable {
    /// Something ended well: the wearer is fine, a caregiver took over, the sensor works again.
    case information
    /// The device cannot watch over the wearer, but nobody is known to be hurt.
    case warning
    /// The wearer may be hurt and needs someone now.
    case alarm
}

/// What an ``Alert`` tells the helpers.
public enum AlertKind: String, Sendable, Equatable, Codable, CaseIterable {
    /// A suspected fall that the wearer did not abort within the countdown.
    case fall
    /// The wearer held the button: an explicit call for help.
    case helpRequested = "help-requested"
    /// A suspected fall the wearer got up from within the countdown (``RecoveryWatch``): no
    /// alarm, but the policy's contacts are told (a fall is the strongest predictor of the next).
    case recoveredFall = "recovered-fall"
    /// The wearer pressed the button after the alert went out: "I'm OK".
    case resolvedByWearer = "resolved-by-wearer"
    /// A caregiver acknowledged the alert remotely; sent so the other helpers know someone took it.
    case acknowledged
    /// The sensor has been faulty for longer than the grace period: falls cannot be detected.
    case deviceProblem = "device-problem"
    /// The sensor works again after a reported ``deviceProblem``.
    case deviceRecovered = "device-recovered"
    /// The daily "monitoring is on" message, sent by the notifiers' schedule; the engine never
    /// produces it.
    case heartbeat

    /// A fall or a help request is an `alarm`, a device problem a `warning`, the rest
    /// (a recovered fall among them: the wearer is up again) `information`.
    public var severity: AlertSeverity {
        switch self {
        case .fall, .helpRequested: .alarm
        case .deviceProblem: .warning
        case .resolvedByWearer, .acknowledged, .deviceRecovered, .heartbeat, .recoveredFall: .information
        }
    }
}

/// One message for the notifiers (SMS, call, MQTT, …), produced by ``AlertEngine`` as
/// ``AlertEffect/dispatch(_:)``. Everything a helper or a field tester needs to judge it is here.
public struct Alert: Sendable, Equatable, Codable {
    public var kind: AlertKind
    /// Always `kind.severity`; stored so that the JSON a notifier receives carries it.
    public var severity: AlertSeverity
    /// The incident this alert belongs to: `<prefix>-<n>` for falls and help requests,
    /// `<prefix>-fault-<n>` for sensor faults. Notifiers use it to match acknowledgements.
    public var incident: String
    /// When the engine decided it, on the engine's monotonic clock, in seconds.
    public var time: Double
    /// The detector's reasons when the incident began with a suspected fall (impact time, peak,
    /// phases, features); nil for a help request from monitoring and for device alerts.
    public var fall: FallSuspected?
    /// Whether the sensor side reported that the wearer resumed walking during the countdown.
    public var wearerResumedWalking: Bool
    /// Who acknowledged, for ``AlertKind/acknowledged``.
    public var acknowledgedBy: String?
    /// The fault, for ``AlertKind/deviceProblem`` and ``AlertKind/deviceRecovered``.
    public var sensorFault: SensorFault?
    /// For ``AlertKind/recoveredFall``: seconds from the impact to the wearer up again.
    public var recoveredAfter: Double?

    public init(kind: AlertKind, incident: String, time: Double, fall: FallSuspected? = nil,
                wearerResumedWalking: Bool = false, acknowledgedBy: String? = nil,
                sensorFault: SensorFault? = nil, recoveredAfter: Double? = nil) {
        self.kind = kind
        self.severity = kind.severity
        self.incident = incident
        self.time = time
        self.fall = fall
        self.wearerResumedWalking = wearerResumedWalking
        self.acknowledgedBy = acknowledgedBy
        self.sensorFault = sensorFault
        self.recoveredAfter = recoveredAfter
    }
}
