import Foundation

/// One site as the staff station sees it: every bridge folded from the messages under
/// `<prefix>/#` (retained and live), the open alarms first. Pure: messages and times come in.
///
/// What each topic tells (docs/notifiers-mqtt-email.md): `availability` online/offline,
/// `state` the alarm's word, `incident` the last incident with who was told and who answered,
/// `alert` every alert (the wearer's name, heartbeats, device problems), `worn` worn or
/// not-worn (the device lies still, not on its wearer).
public struct SiteModel: Sendable, Equatable {
    public struct Bridge: Sendable, Equatable, Encodable {
        public var device: String
        public var online: Bool?
        /// `monitoring`, `countdown`, `alert-out`, `sensor-fault` (nil: not known yet).
        public var state: String?
        public var wearer: String?
        public var location: String?
        /// Unix seconds of the last message from this bridge (the station's clock).
        public var lastSeen: Double?
        public var lastHeartbeat: Double?
        /// The last device problem's text while it lasts (nil once recovered).
        public var sensorProblem: String?
        /// Whether the bridge is worn (false: only its sensor's own noise for minutes; nil: not known).
        public var worn: Bool?
        public var incident: Incident?
        /// When the station first saw the current alarm (alert out, or its countdown).
        public var alarmSince: Double?

        public init(device: String) { self.device = device }

        /// Someone acknowledged the current alarm (reset when a new one starts).
        public var answered = false

        /// The alarm shows as open: an alert out (or its countdown) nobody has acknowledged.
        public var alarmOpen: Bool { (state == "alert-out" || state == "countdown") && !answered }
    }

    public struct Incident: Sendable, Equatable, Encodable {
        public var id: String
        public var kind: String
        public var at: String?
        public var delivered: Bool?
        public var reachedBy: String?
        public var acknowledgedBy: String?
    }

    public let prefix: String
    public private(set) var bridges: [String: Bridge] = [:]
    /// Residents named by the station's file: wearer and location per device.
    public var roster: [String: (wearer: String?, location: String?)] {
        didSet { for (d, r) in roster { bridges[d, default: Bridge(device: d)].apply(roster: r) } }
    }

    public static func == (a: SiteModel, b: SiteModel) -> Bool { a.prefix == b.prefix && a.bridges == b.bridges }

    public init(prefix: String = "fallguard", roster: [String: (wearer: String?, location: String?)] = [:]) {
        self.prefix = prefix
        self.roster = roster
        for (d, r) in roster { bridges[d, default: Bridge(device: d)].apply(roster: r) }
    }

    /// Folds one message in; messages on topics it does not know change nothing. A bridge is
    /// known once it publishes (or the roster names it).
    public mutating func apply(topic: String, payload: [UInt8], now: Double) {
        guard topic.hasPrefix(prefix + "/") else { return }
        let rest = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2, !rest[0].isEmpty else { return }
        let device = String(rest[0])
        let text = String(decoding: payload, as: UTF8.self)
        guard rest[1] != "ack" else { return }
        guard !payload.isEmpty else { return }   // an ack cleared, a retained message withdrawn
        var b = bridges[device] ?? Bridge(device: device)
        if let r = roster[device] { b.apply(roster: r) }
        b.lastSeen = now
        let wasOpen = b.alarmOpen
        var newIncident = false
        switch rest[1] {
        case "availability":
            b.online = text == "online"
        case "worn":
            b.worn = text == "worn"
        case "state":
            // From monitoring (or a fault) into a countdown or an alert: a new alarm.
            if b.state == "monitoring" || b.state == "sensor-fault", text == "countdown" || text == "alert-out" { b.answered = false }
            b.state = text
        case "incident":
            guard let i = try? JSONDecoder().decode(IncidentPayload.self, from: Data(payload)) else { return }
            let acknowledged: String? = i.kind == "acknowledged" ? (i.acknowledgedBy ?? "someone") : i.acknowledgedBy
            if let old = b.incident?.id, old != i.incident { newIncident = true }
            if acknowledged != nil { b.answered = true } else if newIncident { b.answered = false }
            b.incident = Incident(id: i.incident, kind: i.kind, at: i.at, delivered: i.delivered, reachedBy: i.reachedBy,
                                  acknowledgedBy: acknowledged)
        case "alert":
            guard let a = try? JSONDecoder().decode(AlertPayload.self, from: Data(payload)) else { return }
            if roster[device]?.wearer == nil, !a.wearer.name.isEmpty { b.wearer = a.wearer.name }
            switch a.alert.kind {
            case "heartbeat": b.lastHeartbeat = now
            case "device-problem": b.sensorProblem = a.message?.body ?? "device problem"
            case "device-recovered": b.sensorProblem = nil
            default: break
            }
        default:
            return
        }
        // Since when the alarm is open: from the message that opened it (a new incident while
        // one was open opens a new alarm); none while nothing is open.
        if b.alarmOpen, !wasOpen || newIncident || b.alarmSince == nil { b.alarmSince = now }
        if !b.alarmOpen { b.alarmSince = nil }
        bridges[device] = b
    }

    /// Every bridge: open alarms first (oldest first), then the rest by device name.
    public var ordered: [Bridge] {
        bridges.values.sorted { a, b in
            if a.alarmOpen != b.alarmOpen { return a.alarmOpen }
            if a.alarmOpen { return (a.alarmSince ?? 0, a.device) < (b.alarmSince ?? 0, b.device) }
            return a.device.localizedStandardCompare(b.device) == .orderedAscending
        }
    }

    public var openAlarms: [Bridge] { ordered.filter(\.alarmOpen) }

    struct IncidentPayload: Decodable {
        var incident: String
        var kind: String
        var at: String?
        var delivered: Bool?
        var reachedBy: String?
        var acknowledgedBy: String?
        enum CodingKeys: String, CodingKey {
            case incident, kind, at, delivered
            case reachedBy = "reached-by", acknowledgedBy = "acknowledged-by"
        }
    }

    struct AlertPayload: Decodable {
        struct Wearer: Decodable { var name: String }
        struct Inner: Decodable { var kind: String; var incident: String; var acknowledgedBy: String? }
        struct Message: Decodable { var body: String }
        var wearer: Wearer
        var alert: Inner
        var message: Message?
    }
}

extension SiteModel.Bridge {
    mutating func apply(roster r: (wearer: String?, location: String?)) {
        if let w = r.wearer { wearer = w }
        if let l = r.location { location = l }
    }
}
