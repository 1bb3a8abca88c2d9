import Foundation

/// A call as the provider's Call resource reports it (`GET …/Calls/{Sid}.json`), with Twilio's
/// field names: `status` and, with answering-machine detection, `answered_by`.
public struct TwilioCall: Sendable, Equatable, Decodable {
    public var sid: String
    public var status: String
    public var answeredBy: String?

    enum CodingKeys: String, CodingKey { case sid, status, answeredBy = "answered_by" }

    public init(sid: String, status: String, answeredBy: String? = nil) {
        (self.sid, self.status, self.answeredBy) = (sid, status, answeredBy)
    }

    /// What the call came to; nil while it is live (`queued`, `initiated`, `ringing`,
    /// `in-progress`) or in a status this bridge does not know.
    ///
    /// `completed` reached a person when answering-machine detection says `human`. A machine
    /// (`machine_start`, `machine_end_*`), a fax and `unknown` did not: an undetected person
    /// costs the next contact a message, a voicemail taken for a person costs the wearer
    /// minutes on the floor. Without detection (no `answered_by`) a completed call counts as
    /// reached, as the provider cannot tell more.
    public var outcome: CallOutcome? {
        switch status {
        case "completed":
            switch answeredBy {
            case nil, "", "human": return .reached
            case let machine?: return .notReached("answered by \(machine.replacingOccurrences(of: "_", with: " "))")
            }
        case "no-answer", "busy", "failed", "canceled": return .notReached(status)
        default: return nil
        }
    }
}

/// How a call ended.
public enum CallOutcome: Sendable, Equatable {
    case reached
    case notReached(String)
}

/// One message of the Messages list (`GET …/Messages.json`), Twilio's field names.
public struct TwilioMessage: Sendable, Equatable, Decodable {
    public var sid: String
    public var from: String
    public var to: String
    public var body: String
    /// `inbound` for a reply; `outbound-api`, `outbound-reply`, … for what was sent.
    public var direction: String
    /// Unix seconds, from `date_sent` (RFC 2822); nil when missing or unreadable.
    public var dateSent: Double?

    enum CodingKeys: String, CodingKey { case sid, from, to, body, direction, dateSent = "date_sent" }

    public init(sid: String, from: String, to: String, body: String, direction: String, dateSent: Double?) {
        (self.sid, self.from, self.to, self.body, self.direction, self.dateSent) = (sid, from, to, body, direction, dateSent)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sid = try c.decode(String.self, forKey: .sid)
        from = try c.decodeIfPresent(String.self, forKey: .from) ?? ""
        to = try c.decodeIfPresent(String.self, forKey: .to) ?? ""
        body = try c.decodeIfPresent(String.self, forKey: .body) ?? ""
        direction = try c.decodeIfPresent(String.self, forKey: .direction) ?? ""
        dateSent = try c.decodeIfPresent(String.self, forKey: .dateSent).flatMap(RFC2822.seconds(_:))
    }

    /// The page of the list resource: `{"messages": [...], ...}`.
    struct Page: Decodable { var messages: [TwilioMessage] }
}

/// Dates as the provider writes them: `Wed, 25 Nov 2026 16:00:00 +0000`.
enum RFC2822 {
    private static let formatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(secondsFromGMT: 0)
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return f
    }()
    private static let lock = NSLock()

    static func seconds(_ text: String) -> Double? {
        lock.withLock { formatter.date(from: text)?.timeIntervalSince1970 }
    }

    /// `YYYY-MM-DD` of a Unix time, in UTC: the provider's `DateSent>=` filter.
    static func day(_ seconds: Double) -> String {
        var t = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
    }
}
