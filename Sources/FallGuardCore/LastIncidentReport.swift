/// The retained JSON on a bridge's `<prefix>/<device>/incident` topic: Home Assistant's "Last
/// incident" sensor's value and attributes, and what a station reads of each bridge's last
/// incident. One type for both ends, so that the station reads the fields the bridge writes.
public struct LastIncidentReport: Sendable, Codable, Equatable {
    public var incident: String
    public var kind: String
    /// Always written by a bridge; a station reads a report without it.
    public var severity: String?
    /// Wall-clock time, ISO 8601; always written by a bridge, a station reads a report without it.
    public var at: String?
    public var acknowledgedBy: String?
    /// A message of the alarm went out (nil before any did, and for other kinds).
    public var delivered: Bool?
    /// Who answered the alarm's call.
    public var reachedBy: String?
    /// Presence at the bedside by the bridge's button after a station accepted the alarm: who
    /// accepted it, and when (ISO 8601).
    public var presentBy: String?
    public var presentAt: String?

    enum CodingKeys: String, CodingKey {
        case incident, kind, severity, at, delivered
        case acknowledgedBy = "acknowledged-by", reachedBy = "reached-by", presentBy = "present-by", presentAt = "present-at"
    }

    public init(incident: String, kind: String, severity: String, at: String, acknowledgedBy: String? = nil) {
        (self.incident, self.kind, self.severity, self.at, self.acknowledgedBy) = (incident, kind, severity, at, acknowledgedBy)
    }
}
