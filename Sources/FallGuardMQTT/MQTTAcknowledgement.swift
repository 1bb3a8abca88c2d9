import Foundation

/// An acknowledgement received on `<prefix>/<device>/ack`: the payload is an incident id
/// (`FG-3`), `{"incident": "FG-3", "by": "Anna"}`, or `{"by": "Anna"}` / empty for the incident
/// that is currently out (what Home Assistant's button sends).
public struct MQTTAcknowledgement: Sendable, Equatable {
    /// nil: the current incident.
    public var incident: String?
    public var by: String

    /// Who acknowledged when the payload does not say.
    public static let defaultBy = "mqtt"

    public init(incident: String?, by: String) { (self.incident, self.by) = (incident, by) }

    /// Parses a payload; throws a message saying what is wrong with it.
    public init(payload: [UInt8]) throws(MQTTAcknowledgementError) {
        guard let text = String(validating: payload, as: UTF8.self) else { throw .init("payload is not UTF-8") }
        let trimmed = String(text.trimmingWhitespace)
        guard trimmed.hasPrefix("{") else {
            try self.init(incident: trimmed.isEmpty ? nil : trimmed, by: Self.defaultBy, checked: ())
            return
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) as? [String: Any] else {
            throw .init("payload is not a JSON object")
        }
        let incident = object["incident"], by = object["by"]
        guard incident == nil || incident is String, by == nil || by is String else {
            throw .init("'incident' and 'by' must be strings")
        }
        let id = (incident as? String).map { String($0.trimmingWhitespace) }
        let who = (by as? String).map { String($0.trimmingWhitespace) }
        try self.init(incident: id?.isEmpty == true ? nil : id,
                      by: who?.isEmpty == false ? who! : Self.defaultBy, checked: ())
    }

    private init(incident: String?, by: String, checked: ()) throws(MQTTAcknowledgementError) {
        // Incident ids are short plain ASCII (`<prefix>-<n>`); names go into messages.
        if let incident, incident.unicodeScalars.count > 64 || !incident.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) {
            throw .init("'\(incident.prefix(80))' is not an incident id")
        }
        guard by.unicodeScalars.count <= 100, !by.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .init("'by' must be at most 100 characters without control characters")
        }
        self.init(incident: incident, by: by)
    }
}

/// Why an acknowledgement payload was refused.
public struct MQTTAcknowledgementError: Error, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The retained JSON on `<prefix>/<device>/incident`, the "Last incident" sensor's value and
/// attributes.
public struct MQTTLastIncident: Sendable, Codable, Equatable {
    public var incident: String
    public var kind: String
    public var severity: String
    /// Wall-clock time, ISO 8601.
    public var at: String
    public var acknowledgedBy: String?

    enum CodingKeys: String, CodingKey {
        case incident, kind, severity, at
        case acknowledgedBy = "acknowledged-by"
    }

    public init(incident: String, kind: String, severity: String, at: String, acknowledgedBy: String? = nil) {
        (self.incident, self.kind, self.severity, self.at, self.acknowledgedBy) = (incident, kind, severity, at, acknowledgedBy)
    }
}
