import FallGuardCore
import Foundation

/// One site as the staff station sees it: every bridge folded from the messages under
/// `<prefix>/#` (retained and live), the open alarms first. Pure: messages and times come in.
///
/// What each topic tells (docs/notifiers-mqtt-email.md): `availability` online/offline,
/// `state` the alarm's word, `incident` the last incident with who was told and who answered,
/// `alert` every alert (the wearer's name, heartbeats, device problems), `worn` worn or
/// not-worn (the device lies still, not on its wearer).
///
/// Alarms are matched by incident: a countdown (or an alert out after monitoring) is a new
/// alarm, whose incident is the next one the bridge names; the previous incident (acknowledged,
/// perhaps) is kept apart and never closes, names or answers the new alarm. Times of the
/// bridge's own clock (an incident's `at`, an alert's `sentAt`) are kept beside the station's
/// receive time.
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
        /// The current alarm's incident while one is open (nil during its countdown); else the
        /// bridge's last incident.
        public var incident: Incident?
        /// The incident before the current alarm's (shown as the last one until the new one has
        /// its own; its messages, retained ones sent again after a reconnect, change only it).
        public var previousIncident: Incident?
        /// When the station first saw the current alarm (alert out, or its countdown).
        public var alarmSince: Double?
        /// When the bridge raised the current alarm's alert, by its own clock (its incident's
        /// `at`, its alert's `sentAt`); nil during the countdown or when no message said.
        public var raisedAt: Double?
        /// When the station received the message that said so (beside ``raisedAt`` when they differ:
        /// the station saw it late, after an outage, or the clocks differ).
        public var raisedSeenAt: Double?

        public init(device: String) { self.device = device }

        /// Someone acknowledged the current alarm (reset when a new one starts).
        public var answered = false

        /// The alarm shows as open: an alert out (or its countdown) nobody has acknowledged.
        public var alarmOpen: Bool { (state == "alert-out" || state == "countdown") && !answered }

        /// Whether `incident` is this bridge's alert out now, open: the only incident the
        /// station signs an acknowledgement for (issue 40: a signature for an incident not open
        /// yet, kept and published later, would acknowledge a fall nobody has seen).
        public func isOpenAlert(_ incident: String) -> Bool {
            state == "alert-out" && alarmOpen && self.incident?.id == incident
        }

        /// What keeps this bridge from protecting its wearer now, each a fault call on the page:
        /// `offline`, `not worn`, `sensor: <problem>` (empty: none known).
        public var hasFault: Bool { online == false || worn == false || sensorProblem != nil || state == "sensor-fault" }

        public var faults: [String] {
            var f: [String] = []
            if online == false { f.append("offline") }
            if worn == false { f.append("not worn") }
            if let p = sensorProblem { f.append("sensor: " + p) } else if state == "sensor-fault" { f.append("sensor fault") }
            return f
        }
    }

    public struct Incident: Sendable, Equatable, Encodable {
        public var id: String
        public var kind: String
        public var at: String?
        public var delivered: Bool?
        public var reachedBy: String?
        public var acknowledgedBy: String?
        /// `at` as Unix seconds (the bridge's clock), and when the station received it.
        public var atTime: Double?
        public var receivedAt: Double?
    }

    public let prefix: String
    public private(set) var bridges: [String: Bridge] = [:]
    /// Every device of ``bridges`` in the page's order of names (``naturalOrder(_:_:)``), kept as
    /// bridges come (a binary search each): ``ordered`` never sorts the whole site at a poll
    /// (issue 40: a poll of 1,001 bridges cost a debug build ~0.4 s of CPU).
    private var byName: [String] = []
    /// Residents named by the station's file: wearer and location per device.
    public var roster: [String: (wearer: String?, location: String?)] {
        didSet { applyRoster() }
    }

    public static func == (a: SiteModel, b: SiteModel) -> Bool { a.prefix == b.prefix && a.bridges == b.bridges }

    public init(prefix: String = "fallguard", roster: [String: (wearer: String?, location: String?)] = [:]) {
        self.prefix = prefix
        self.roster = roster
        applyRoster()
    }

    private mutating func applyRoster() {
        for (d, r) in roster {
            var b = bridges[d] ?? Bridge(device: d)
            b.apply(roster: r)
            put(b)
        }
    }

    /// Keeps `b`, a new device in its place in ``byName``.
    private mutating func put(_ b: Bridge) {
        if bridges.updateValue(b, forKey: b.device) == nil {
            var low = 0, high = byName.count
            while low < high {
                let mid = (low + high) / 2
                if naturalOrder(byName[mid], b.device) { low = mid + 1 } else { high = mid }
            }
            byName.insert(b.device, at: low)
        }
    }

    /// Bridges the roster does not name that the station keeps (issue 40: 20,000 fake bridges
    /// on the broker must not fill its memory nor its page); a bridge the roster names is always
    /// kept, and one already known stays.
    public static let unlistedBridges = 1_000

    /// The most bytes each topic's payload may have (a bridge's messages are far shorter:
    /// a word, an incident of ~200 bytes, an alert of ~1 KB); a longer one is refused.
    public static func payloadLimit(_ topic: Substring) -> Int {
        switch topic {
        case "incident": 2_048
        case "alert": 8_192
        default: 64
        }
    }

    /// The most characters a name or a text from a bridge keeps (wearer, location, who answered, a device problem).
    public static let fieldLength = 200

    /// A message the site did not take, and why (the station logs these at a budget).
    public struct Refusal: Sendable, Equatable, CustomStringConvertible {
        public var device: String
        public var why: String
        public var description: String { "\(device): \(why)" }
    }

    /// Folds one message in; messages on topics it does not know change nothing. A bridge is
    /// known once it publishes (or the roster names it). Returns why a message was refused
    /// (a payload too long for its topic, a new bridge past ``unlistedBridges``).
    @discardableResult
    public mutating func apply(topic: String, payload: [UInt8], now: Double) -> Refusal? {
        guard topic.hasPrefix(prefix + "/") else { return nil }
        let rest = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2, !rest[0].isEmpty else { return nil }
        let device = String(rest[0])
        guard rest[1] != "ack" else { return nil }
        guard !payload.isEmpty else { return nil }   // an ack cleared, a retained message withdrawn
        guard payload.count <= Self.payloadLimit(rest[1]) else {
            return Refusal(device: device, why: "a \(rest[1]) of \(payload.count) bytes (at most \(Self.payloadLimit(rest[1])))")
        }
        guard bridges[device] != nil || bridges.count < roster.count + Self.unlistedBridges else {
            return Refusal(device: device, why: "more than \(Self.unlistedBridges) bridges the station's residents do not name: not shown")
        }
        let text = String(decoding: payload, as: UTF8.self)
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
            // A countdown is always a new alarm; an alert out is one after monitoring or a fault
            // (after nothing known it is the alarm the retained incident names).
            let fresh = text == "countdown" && b.state != "countdown"
                || text == "alert-out" && (b.state == "monitoring" || b.state == "sensor-fault")
            if fresh {
                b.answered = false
                if let i = b.incident { b.previousIncident = i }
                b.incident = nil
                (b.raisedAt, b.raisedSeenAt, b.alarmSince) = (nil, nil, nil)
            }
            b.state = text
        case "incident":
            guard let i = try? JSONDecoder().decode(LastIncidentReport.self, from: Data(payload)) else { return nil }
            let acknowledged: String? = i.kind == "acknowledged" ? (i.acknowledgedBy ?? "someone") : i.acknowledgedBy
            var incident = Incident(id: Self.clip(i.incident), kind: Self.clip(i.kind), at: i.at.map(Self.clip), delivered: i.delivered,
                                    reachedBy: i.reachedBy.map(Self.clip), acknowledgedBy: acknowledged.map(Self.clip), atTime: PastIncidents.bridgeTime(i.at, now: now), receivedAt: now)
            // The previous alarm's incident (its retained copy again, or its acknowledgement
            // landing late: not an alarm of another time under the same id, as a bridge whose
            // state was wiped would number it), or one that is over during a countdown (the new
            // alarm's comes with its alert): it stays the previous one.
            let over = acknowledged != nil || !PastIncidents.alarmKinds.contains(i.kind)
            if i.incident == b.previousIncident?.id && (over || incident.atTime == b.previousIncident?.atTime)
                || b.state == "countdown" && b.incident == nil && over {
                b.previousIncident = incident
                break
            }
            if let old = b.incident, old.id == i.incident, incident.atTime == old.atTime { incident.receivedAt = old.receivedAt }
            if let old = b.incident?.id, old != i.incident { newIncident = true; b.previousIncident = b.incident }
            if acknowledged != nil { b.answered = true } else if newIncident { b.answered = false }
            if newIncident { (b.raisedAt, b.raisedSeenAt) = (nil, nil) }
            if PastIncidents.alarmKinds.contains(i.kind), let t = incident.atTime, b.raisedAt.map({ t < $0 }) ?? true {
                (b.raisedAt, b.raisedSeenAt) = (t, now)
            }
            b.incident = incident
        case "alert":
            guard let a = try? JSONDecoder().decode(AlertPayload.self, from: Data(payload)) else { return nil }
            if roster[device]?.wearer == nil, !a.wearer.name.isEmpty { b.wearer = Self.clip(a.wearer.name) }
            switch a.alert.kind {
            case "heartbeat": b.lastHeartbeat = now
            case "device-problem": b.sensorProblem = Self.clip(a.message?.body ?? "device problem")
            case "device-recovered": b.sensorProblem = nil
            case let kind where PastIncidents.alarmKinds.contains(kind):
                // The alert of the current alarm: its time by the bridge's clock.
                if b.incident == nil || b.incident?.id == a.alert.incident, let t = PastIncidents.bridgeTime(a.sentAt, now: now),
                   b.raisedAt.map({ t < $0 }) ?? true {
                    (b.raisedAt, b.raisedSeenAt) = (t, now)
                }
            default: break
            }
        default:
            return nil
        }
        // Since when the alarm is open: from the message that opened it (a new incident while
        // one was open opens a new alarm); none while nothing is open.
        if b.alarmOpen, !wasOpen || newIncident || b.alarmSince == nil { b.alarmSince = now }
        if !b.alarmOpen { b.alarmSince = nil }
        put(b)
        return nil
    }

    /// A bridge's text cut to ``fieldLength`` characters.
    public static func clip(_ text: String) -> String {
        text.count <= fieldLength ? text : String(text.prefix(fieldLength - 1)) + "…"
    }

    /// Every bridge: open alarms first (oldest first), then those with a fault, then the rest,
    /// each by device name (``naturalOrder(_:_:)``).
    public var ordered: [Bridge] {
        var alarms: [Bridge] = [], faulty: [Bridge] = [], rest: [Bridge] = []
        rest.reserveCapacity(byName.count)
        for d in byName {
            guard let b = bridges[d] else { continue }
            if b.alarmOpen { alarms.append(b) } else if b.hasFault { faulty.append(b) } else { rest.append(b) }
        }
        alarms.sort { ($0.alarmSince ?? 0, $0.device) < ($1.alarmSince ?? 0, $1.device) }
        return alarms + faulty + rest
    }

    /// The station's own link to the broker: without it nothing the page shows is current.
    public struct Link: Sendable, Equatable, Encodable {
        public var connected: Bool
        /// Unix seconds since when it is (not) connected.
        public var since: Double
        /// Why not (the last refusal, error or loss).
        public var problem: String?
        /// `host:port`.
        public var broker: String

        public init(connected: Bool, since: Double, problem: String?, broker: String) {
            (self.connected, self.since, self.problem, self.broker) = (connected, since, problem, broker)
        }
    }

    /// Whether what the station knows of `bridge` is stale: the link is down, or the bridge has
    /// said nothing since it came back (its retained messages come again at every reconnect).
    public static func isStale(_ bridge: Bridge, link: Link) -> Bool {
        !link.connected || (bridge.lastSeen.map { $0 < link.since } ?? false)
    }

    public var openAlarms: [Bridge] { ordered.filter(\.alarmOpen) }

    struct AlertPayload: Decodable {
        struct Wearer: Decodable { var name: String }
        struct Inner: Decodable { var kind: String; var incident: String; var acknowledgedBy: String? }
        struct Message: Decodable { var body: String }
        var wearer: Wearer
        var alert: Inner
        var message: Message?
        var sentAt: String?
    }
}

extension SiteModel.Bridge {
    mutating func apply(roster r: (wearer: String?, location: String?)) {
        if let w = r.wearer { wearer = w }
        if let l = r.location { location = l }
    }
}
