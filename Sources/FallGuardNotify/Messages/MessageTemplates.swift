import FallGuardCore

/// Section `templates`: the text of each kind of message. A template may use `{wearer}`,
/// `{time}`, `{incident}`, `{reason}`, `{location}`, `{device}`, `{by}` and `{fault}`; keys are
/// the alert kinds (`fall`, `help-requested`, …); absent keys keep the built-in text.
public struct MessageTemplates: ConfigSection, Equatable {
    /// The placeholders a template may use.
    public static let placeholders = ["wearer", "time", "incident", "reason", "location", "device", "by", "fault"]

    /// The built-in body for each kind.
    public static let builtIn: [AlertKind: String] = [
        .fall: "FALL ALERT: {wearer} may have fallen at {time} and did not cancel the alarm. Please check on them now. Location: {location}. Detector: {reason}. Incident {incident}.",
        .helpRequested: "HELP REQUEST: {wearer} pressed the help button at {time}. Please check on them now. Location: {location}. Incident {incident}.",
        .resolvedByWearer: "All clear: {wearer} pressed \"I'm OK\" at {time}: false alarm. Incident {incident}.",
        .acknowledged: "{by} is handling incident {incident} for {wearer} (acknowledged at {time}).",
        .deviceProblem: "FallGuard for {wearer} cannot detect falls since {time}: {fault}. Please check the device. Incident {incident}.",
        .deviceRecovered: "FallGuard for {wearer} works again since {time}. Incident {incident}.",
        .heartbeat: "FallGuard is watching over {wearer} ({time}): monitoring is on.",
    ]

    /// The built-in subject (one line) for each kind.
    public static let subjects: [AlertKind: String] = [
        .fall: "Fall alert: {wearer}", .helpRequested: "Help request: {wearer}",
        .resolvedByWearer: "All clear: {wearer}", .acknowledged: "Alert taken by {by}: {wearer}",
        .deviceProblem: "Device problem: {wearer}'s fall detector", .deviceRecovered: "Device working again: {wearer}",
        .heartbeat: "Monitoring is on: {wearer}",
    ]

    /// Overrides by kind.
    public var bodies: [AlertKind: String]
    /// Key `sms-limit`: the longest body in characters, default 306 (two GSM-7 SMS segments;
    /// a body with other characters gets 134, two UCS-2 segments). Longer bodies are shortened:
    /// the detector's reason first, then the location.
    public var smsLimit: Int

    public init(bodies: [AlertKind: String] = [:], smsLimit: Int = 306) {
        self.bodies = bodies
        self.smsLimit = smsLimit
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        static let smsLimit = Key(stringValue: "sms-limit")
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        smsLimit = try c.value(.smsLimit, or: 306)
        bodies = [:]
        for kind in AlertKind.allCases {
            if let text = try c.decodeIfPresent(String.self, forKey: Key(stringValue: kind.rawValue)) { bodies[kind] = text }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(smsLimit, forKey: .smsLimit)
        for (kind, text) in bodies { try c.encode(text, forKey: Key(stringValue: kind.rawValue)) }
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found: [ConfigProblem] = []
        if !(70...1600).contains(smsLimit) { found.append(ConfigProblem(path + ["sms-limit"], "\(smsLimit) is outside 70...1600")) }
        for kind in AlertKind.allCases {
            guard let text = bodies[kind] else { continue }
            for name in Self.placeholderNames(in: text) where !Self.placeholders.contains(name) {
                found.append(ConfigProblem(path + [kind.rawValue], "unknown placeholder {\(name)} (known: \(Self.placeholders.map { "{\($0)}" }.joined(separator: " ")))"))
            }
        }
        return found
    }

    /// The names between braces in `text`.
    static func placeholderNames(in text: String) -> [String] {
        var names: [String] = []
        var current: String?
        for ch in text {
            if ch == "{" { current = "" } else if ch == "}", let c = current { names.append(c); current = nil } else { current?.append(ch) }
        }
        return names
    }
}
