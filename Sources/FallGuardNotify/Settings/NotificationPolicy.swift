import FallGuardCore
import Foundation

/// Which channels one kind of alert uses, and for how long its deliveries are tried.
public struct AlertRoute: Sendable, Equatable {
    /// Channels for the contact currently responsible (first the primary contact, then, on
    /// escalation, the next one down the list).
    public var primary: [String]
    /// Channels for every other contact, sent at once.
    public var others: [String]
    /// Channels without a recipient (webhook, MQTT, exec, console).
    public var broadcast: [String]
    /// When the responsible contact is not reached (a delivery failed, or no acknowledgement
    /// within ``NotificationPolicy/acknowledgeWithin``), the next contact gets the `primary` channels.
    public var escalate: Bool
    /// Seconds during which a delivery is retried before it is marked failed.
    public var deadline: Double

    public init(primary: [String], others: [String] = [], broadcast: [String] = [], escalate: Bool = false,
                deadline: Double = 3600) {
        (self.primary, self.others, self.broadcast, self.escalate, self.deadline) = (primary, others, broadcast, escalate, deadline)
    }

    /// As in the iOS thesis: the primary contact gets an SMS and a voice call, the others an SMS;
    /// escalation on; tried for an hour.
    public static let alarm = AlertRoute(primary: ["sms", "call"], others: ["sms"], escalate: true)
    /// Follow-ups (resolved by the wearer, acknowledged) and a recovered fall: an SMS to every contact.
    public static let followUp = AlertRoute(primary: ["sms"], others: ["sms"])
    /// Device problems and the heartbeat: an SMS to the primary contact.
    public static let primaryOnly = AlertRoute(primary: ["sms"])
}

/// How retries back off: `initial`·2ⁿ, capped at `max`, each multiplied by a random factor in
/// [1 − jitter, 1].
public struct RetrySettings: Sendable, Equatable {
    /// Seconds before the first retry.
    public var initial: Double
    /// The longest wait between two attempts.
    public var max: Double
    /// 0 … 1.
    public var jitter: Double

    public init(initial: Double = 1, max: Double = 60, jitter: Double = 0.5) {
        (self.initial, self.max, self.jitter) = (initial, max, jitter)
    }

    /// The wait after `attempts` failed attempts (1 for the first failure); `random` is in 0…1.
    public func delay(afterAttempts attempts: Int, random: Double) -> Double {
        let exponent = Double(Swift.min(Swift.max(attempts - 1, 0), 30))
        let base = Swift.min(max, initial * Double.pow2(exponent))
        return base * (1 - jitter * random)
    }
}

extension Double {
    fileprivate static func pow2(_ e: Double) -> Double { Double(sign: .plus, exponent: Int(e), significand: 1) }
}

/// Which channels each alert kind uses, escalation and retries.
public struct NotificationPolicy: Sendable, Equatable {
    public var fall: AlertRoute
    public var helpRequested: AlertRoute
    /// A fall the wearer got up from within the countdown (information: no call); nil (the
    /// file names none, as every file before it existed): the `resolved` route's channels.
    public var recoveredFall: AlertRoute?
    /// The follow-ups: resolved by the wearer (false alarm) and acknowledged.
    public var resolved: AlertRoute
    /// A device problem, and its recovery.
    public var deviceProblem: AlertRoute
    /// The daily "monitoring is on" message.
    public var heartbeat: AlertRoute
    /// Seconds the responsible contact has to acknowledge before the next contact is tried.
    public var acknowledgeWithin: Double
    /// Local time of the daily heartbeat, `HH:MM`.
    public var heartbeatAt: String
    public var retry: RetrySettings

    public init(fall: AlertRoute = .alarm, helpRequested: AlertRoute = .alarm, recoveredFall: AlertRoute? = nil,
                resolved: AlertRoute = .followUp,
                deviceProblem: AlertRoute = .primaryOnly, heartbeat: AlertRoute = .primaryOnly,
                acknowledgeWithin: Double = 300, heartbeatAt: String = "09:00", retry: RetrySettings = RetrySettings()) {
        self.fall = fall
        self.helpRequested = helpRequested
        self.recoveredFall = recoveredFall
        self.resolved = resolved
        self.deviceProblem = deviceProblem
        self.heartbeat = heartbeat
        self.acknowledgeWithin = acknowledgeWithin
        self.heartbeatAt = heartbeatAt
        self.retry = retry
    }

    /// The route for an alert kind.
    public func route(for kind: AlertKind) -> AlertRoute {
        switch kind {
        case .fall: fall
        case .helpRequested: helpRequested
        case .recoveredFall: recoveredFall ?? resolved
        case .resolvedByWearer, .acknowledged: resolved
        case .deviceProblem, .deviceRecovered: deviceProblem
        case .heartbeat: heartbeat
        }
    }

    /// ``heartbeatAt`` as a time of day, nil when malformed.
    public var heartbeatTime: LocalTime? { LocalTime(parsing: heartbeatAt) }

    /// The next daily heartbeat strictly after `date`, at ``heartbeatAt`` in `timeZone` (nil:
    /// the bridge's own zone, through the C library); nil when ``heartbeatAt`` is malformed.
    public func nextHeartbeat(after date: Date, timeZone: TimeZone? = nil) -> Date? {
        guard let time = heartbeatTime else { return nil }
        guard let timeZone else { return SystemLocalTime.next(time, after: date) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.nextDate(after: date, matching: DateComponents(hour: time.hour, minute: time.minute, second: 0),
                                 matchingPolicy: .nextTime)
    }
}
