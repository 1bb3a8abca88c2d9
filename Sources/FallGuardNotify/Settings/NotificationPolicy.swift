import FallGuardCore
import Foundation

/// Which channels one kind of alert uses, and for how long its deliveries are tried.
public struct AlertRoute: Sendable, Equatable, Codable {
    /// Key `primary`: channels for the contact currently responsible (first the primary
    /// contact, then, on escalation, the next one down the list).
    public var primary: [String]
    /// Key `others`: channels for every other contact, sent at once.
    public var others: [String]
    /// Key `broadcast`: channels without a recipient (webhook, MQTT, exec, console).
    public var broadcast: [String]
    /// Key `escalate`: when the responsible contact is not reached (a delivery failed, or no
    /// acknowledgement within `acknowledge-within`), the next contact gets the `primary` channels.
    public var escalate: Bool
    /// Key `deadline`: seconds during which a delivery is retried before it is marked failed.
    public var deadline: Double

    public init(primary: [String], others: [String] = [], broadcast: [String] = [], escalate: Bool = false,
                deadline: Double = 3600) {
        self.primary = primary
        self.others = others
        self.broadcast = broadcast
        self.escalate = escalate
        self.deadline = deadline
    }

    enum CodingKeys: String, CodingKey { case primary, others, broadcast, escalate, deadline }

    /// As in the iOS thesis: the primary contact gets an SMS and a voice call, the others an SMS;
    /// escalation on; tried for an hour.
    public static let alarm = AlertRoute(primary: ["sms", "call"], others: ["sms"], escalate: true)
    /// Follow-ups (`resolved-by-wearer`, `acknowledged`): an SMS to every contact.
    public static let followUp = AlertRoute(primary: ["sms"], others: ["sms"])
    /// Device problems and the heartbeat: an SMS to the primary contact.
    public static let primaryOnly = AlertRoute(primary: ["sms"])

    /// Decodes the route at `key`, taking every absent key from `defaults`.
    static func decode<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K, defaults: AlertRoute) throws -> AlertRoute {
        guard c.contains(key) else { return defaults }
        let r = try c.nestedContainer(keyedBy: CodingKeys.self, forKey: key)
        return AlertRoute(primary: try r.value(.primary, or: defaults.primary),
                          others: try r.value(.others, or: defaults.others),
                          broadcast: try r.value(.broadcast, or: defaults.broadcast),
                          escalate: try r.value(.escalate, or: defaults.escalate),
                          deadline: try r.value(.deadline, or: defaults.deadline))
    }

    /// Every channel name with its key path.
    func channelReferences(at path: [String]) -> [(name: String, path: [String])] {
        [("primary", primary), ("others", others), ("broadcast", broadcast)].flatMap { key, names in
            names.enumerated().map { (name: $1, path: path + [key, String($0)]) }
        }
    }
}

/// How retries back off: `initial`·2ⁿ, capped at `max`, each multiplied by a random factor in
/// [1 − jitter, 1].
public struct RetrySettings: Sendable, Equatable, Codable {
    /// Key `initial`: seconds before the first retry, default 1.
    public var initial: Double
    /// Key `max`: the longest wait between two attempts, default 60.
    public var max: Double
    /// Key `jitter`: 0 … 1, default 0.5.
    public var jitter: Double

    public init(initial: Double = 1, max: Double = 60, jitter: Double = 0.5) {
        self.initial = initial
        self.max = max
        self.jitter = jitter
    }

    private enum CodingKeys: String, CodingKey { case initial, max, jitter }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        initial = try c.value(.initial, or: 1)
        max = try c.value(.max, or: 60)
        jitter = try c.value(.jitter, or: 0.5)
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

/// Section `policy`: which channels each alert kind uses, escalation and retries.
public struct NotificationPolicy: ConfigSection, Equatable {
    /// Key `fall`.
    public var fall: AlertRoute
    /// Key `help-requested`.
    public var helpRequested: AlertRoute
    /// Key `resolved`: the follow-ups `resolved-by-wearer` (false alarm) and `acknowledged`.
    public var resolved: AlertRoute
    /// Key `device-problem`: `device-problem` and `device-recovered`.
    public var deviceProblem: AlertRoute
    /// Key `heartbeat`: the daily "monitoring is on" message.
    public var heartbeat: AlertRoute
    /// Key `acknowledge-within`: seconds the responsible contact has to acknowledge before the
    /// next contact is tried, default 300.
    public var acknowledgeWithin: Double
    /// Key `heartbeat-at`: local time of the daily heartbeat, `HH:MM`, default `09:00`.
    public var heartbeatAt: String
    /// Key `retry`.
    public var retry: RetrySettings

    public init(fall: AlertRoute = .alarm, helpRequested: AlertRoute = .alarm, resolved: AlertRoute = .followUp,
                deviceProblem: AlertRoute = .primaryOnly, heartbeat: AlertRoute = .primaryOnly,
                acknowledgeWithin: Double = 300, heartbeatAt: String = "09:00", retry: RetrySettings = RetrySettings()) {
        self.fall = fall
        self.helpRequested = helpRequested
        self.resolved = resolved
        self.deviceProblem = deviceProblem
        self.heartbeat = heartbeat
        self.acknowledgeWithin = acknowledgeWithin
        self.heartbeatAt = heartbeatAt
        self.retry = retry
    }

    private enum CodingKeys: String, CodingKey {
        case fall, helpRequested = "help-requested", resolved, deviceProblem = "device-problem", heartbeat
        case acknowledgeWithin = "acknowledge-within", heartbeatAt = "heartbeat-at", retry
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fall = try AlertRoute.decode(c, .fall, defaults: .alarm)
        helpRequested = try AlertRoute.decode(c, .helpRequested, defaults: .alarm)
        resolved = try AlertRoute.decode(c, .resolved, defaults: .followUp)
        deviceProblem = try AlertRoute.decode(c, .deviceProblem, defaults: .primaryOnly)
        heartbeat = try AlertRoute.decode(c, .heartbeat, defaults: .primaryOnly)
        acknowledgeWithin = try c.value(.acknowledgeWithin, or: 300)
        heartbeatAt = try c.value(.heartbeatAt, or: "09:00")
        retry = try c.value(.retry, or: RetrySettings())
    }

    /// The route for an alert kind, with its key under `policy`.
    public func route(for kind: AlertKind) -> (key: String, route: AlertRoute) {
        switch kind {
        case .fall: ("fall", fall)
        case .helpRequested: ("help-requested", helpRequested)
        case .resolvedByWearer, .acknowledged: ("resolved", resolved)
        case .deviceProblem, .deviceRecovered: ("device-problem", deviceProblem)
        case .heartbeat: ("heartbeat", heartbeat)
        }
    }

    var routes: [(key: String, route: AlertRoute)] {
        [("fall", fall), ("help-requested", helpRequested), ("resolved", resolved),
         ("device-problem", deviceProblem), ("heartbeat", heartbeat)]
    }

    /// `heartbeat-at` as minutes after midnight, nil when malformed.
    public var heartbeatMinute: Int? {
        let p = heartbeatAt.split(separator: ":")
        guard p.count == 2, p[0].count == 2, p[1].count == 2, let h = Int(p[0]), let m = Int(p[1]),
              (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        return h * 60 + m
    }

    /// The next daily heartbeat strictly after `date`, at `heartbeat-at` in `timeZone` (nil: the
    /// bridge's own zone, through the C library); nil when `heartbeat-at` is malformed.
    public func nextHeartbeat(after date: Date, timeZone: TimeZone? = nil) -> Date? {
        guard let minute = heartbeatMinute else { return nil }
        guard let timeZone else { return SystemLocalTime.next(hour: minute / 60, minute: minute % 60, after: date) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.nextDate(after: date, matching: DateComponents(hour: minute / 60, minute: minute % 60, second: 0),
                                 matchingPolicy: .nextTime)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        for (key, route) in routes {
            found += ConfigCheck.seconds(route.deadline, in: 10...7 * 86_400, at: path + [key, "deadline"])
        }
        found += ConfigCheck.seconds(acknowledgeWithin, in: 10...86_400, at: path + ["acknowledge-within"])
        if heartbeatMinute == nil {
            found.append(ConfigProblem(path + ["heartbeat-at"], "'\(heartbeatAt)' is not a time of day HH:MM"))
        }
        found += ConfigCheck.seconds(retry.initial, in: 0.01...3600, at: path + ["retry", "initial"])
        found += ConfigCheck.seconds(retry.max, in: retry.initial...86_400, at: path + ["retry", "max"])
        if !(0...1).contains(retry.jitter) {
            found.append(ConfigProblem(path + ["retry", "jitter"], "\(retry.jitter) is outside 0...1"))
        }
        return found
    }
}
