import FallGuardCore
import Foundation

/// Renders the text of an alert from ``MessageTemplates``: the wearer's name, the local time,
/// the incident id, the detector's reason and the location, fitted to the SMS length.
public struct MessageRenderer: Sendable {
    public var templates: MessageTemplates
    public var wearer: Wearer
    public var device: String
    /// nil: the bridge's own zone, through the C library (see ``SystemLocalTime``).
    public var timeZone: TimeZone?

    public init(templates: MessageTemplates, wearer: Wearer, device: String, timeZone: TimeZone? = nil) {
        (self.templates, self.wearer, self.device, self.timeZone) = (templates, wearer, device, timeZone)
    }

    /// The subject and body for `alert` at wall-clock `date`; `test` marks both as a test.
    public func render(_ alert: Alert, at date: Date, test: Bool) -> RenderedMessage {
        // Typed: Debian's Swift 6.2.3 (the arm64 package's compiler) gave up type-checking the
        // untyped literal in release builds ("unable to type-check this expression in
        // reasonable time").
        var values: [String: String] = [
            "wearer": wearer.name, "time": localTime(date), "incident": alert.incident, "device": device,
            "reason": alert.fall?.reason ?? "none", "location": wearer.location.isEmpty ? "not given" : wearer.location,
            "by": alert.acknowledgedBy ?? "a helper", "fault": alert.sensorFault?.description ?? "unknown fault",
            "walked": alert.wearerResumedWalking ? " They walked again during the countdown." : "",
            "after": alert.recoveredAfter.map { "\(Int($0.rounded())) s" } ?? "a moment",
        ]
        let bodyTemplate = templates.bodies[alert.kind] ?? Self.builtIn(for: alert)
        let prefix = test ? "TEST, nobody needs help: " : ""
        var body = prefix + Self.fill(bodyTemplate, values)
        // Too long for an SMS: drop the reason, then shorten the location, then cut.
        if !fits(body) && bodyTemplate.contains("{reason}") {
            values["reason"] = alert.fall.map { "\($0.detector), peak \(String(format: "%.1f", $0.peak)) g" } ?? "none"
            body = prefix + Self.fill(bodyTemplate, values)
        }
        if !fits(body) && bodyTemplate.contains("{location}") {
            let over = body.count - limit(for: body)
            values["location"] = String(values["location"]!.prefix(max(10, values["location"]!.count - over - 1))) + "~"
            body = prefix + Self.fill(bodyTemplate, values)
        }
        if !fits(body) { body = String(body.prefix(limit(for: body) - 1)) + "~" }
        let subject = (test ? "[TEST] " : "") + Self.fill(MessageTemplates.subjects[alert.kind]!, values)
        return RenderedMessage(subject: subject, body: body)
    }

    /// The built-in text for `alert`: storage and not-worn device problems have their own.
    static func builtIn(for alert: Alert) -> String {
        switch (alert.kind, alert.sensorFault?.problem) {
        case (.deviceProblem, .storage): MessageTemplates.storageProblem
        case (.deviceProblem, .notWorn): MessageTemplates.notWornProblem
        case (.deviceRecovered, .notWorn): MessageTemplates.wornAgain
        case (.deviceProblem, .batteryLow): MessageTemplates.batteryLow
        case (.deviceProblem, .shuttingDown): MessageTemplates.shuttingDown
        case (.deviceProblem, .onBattery): MessageTemplates.onBattery
        case (.deviceRecovered, .onBattery): MessageTemplates.mainsBack
        default: MessageTemplates.builtIn[alert.kind]!
        }
    }

    /// `14:03 on Sun 22 Nov` in the bridge's time zone (English names: messages are English).
    public func localTime(_ date: Date) -> String {
        let c: DateComponents
        if let timeZone {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            c = calendar.dateComponents([.hour, .minute, .weekday, .day, .month], from: date)
        } else {
            let t = SystemLocalTime.fields(date)
            c = DateComponents(month: Int(t.tm_mon) + 1, day: Int(t.tm_mday), hour: Int(t.tm_hour), minute: Int(t.tm_min),
                               weekday: Int(t.tm_wday) + 1)
        }
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { let v = n ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(c.hour)):\(two(c.minute)) on \(weekdays[(c.weekday ?? 1) - 1]) \(c.day ?? 0) \(months[(c.month ?? 1) - 1])"
    }

    /// ISO 8601 with the bridge's UTC offset, e.g. `2026-11-22T14:03:05+0100`.
    public func isoTime(_ date: Date) -> String {
        guard let timeZone else { return SystemLocalTime.iso8601(date) }
        return date.formatted(Date.ISO8601FormatStyle(timeZone: timeZone))
    }

    /// The character limit for `text`: ``MessageTemplates/smsLimit`` for plain GSM text, two UCS-2 segments otherwise.
    func limit(for text: String) -> Int {
        text.unicodeScalars.allSatisfy { $0.isASCII } ? templates.smsLimit : min(templates.smsLimit, 134)
    }

    func fits(_ text: String) -> Bool { text.count <= limit(for: text) }

    static func fill(_ template: String, _ values: [String: String]) -> String {
        var out = template
        for (name, value) in values { out = out.replacingOccurrences(of: "{\(name)}", with: value) }
        return out
    }
}
