import FallGuardCore
import Foundation

/// The alarms the station has seen across the site, kept for the last days: when each was
/// raised, on which bridge, for whom and where, who was told, who answered and when, and how
/// it ended. Folded from the same messages as ``SiteModel``; pure: messages and times come in,
/// the records that changed go out (the station writes them to its SQLite file and reads them
/// back at start, ``init(records:)``).
///
/// An alarm opens when a bridge's `state` goes to `countdown` or `alert-out` (or its incident
/// or alert names an alarm the station has not seen); it takes its incident id from the
/// bridge's `incident` or `alert` message, who was told from `delivered`/`reached-by`, who
/// answered from an `acknowledged` incident, and ends when the bridge is back to `monitoring`:
/// `acknowledged`, `resolved-by-wearer`, `aborted` (a countdown the wearer stopped: no alert
/// went out) or `ended` (the alert's time ran out with nobody answering). A message seen twice
/// (retained ones after every reconnect) changes nothing.
public struct PastIncidents: Sendable, Equatable {
    public struct Record: Sendable, Equatable, Codable {
        /// Unique and never changed: `<device>@<raised, ms>`.
        public var key: String
        public var device: String
        /// The bridge's incident id (nil: a countdown stopped before an alert went out).
        public var incident: String?
        /// `fall`, `help-requested` (nil: a countdown that never became an alert).
        public var kind: String?
        public var wearer: String?
        public var location: String?
        /// The resident's floor or wing when it was raised (the roster's `floor`).
        public var floor: String?
        /// Unix seconds on the station's clock (the incident's own time for one first seen
        /// already over, in a retained message).
        public var raisedAt: Double
        /// Whether an alert went out (not only a countdown).
        public var alertOut: Bool
        /// A message of the alarm reached a contact.
        public var delivered: Bool
        /// Who answered the alarm's call.
        public var reachedBy: String?
        public var acknowledgedBy: String?
        public var acknowledgedAt: Double?
        public var resolvedByWearer: Bool
        public var endedAt: Double?
        /// When the alert went out (the call placed; nil: a countdown only), station's clock.
        public var alertAt: Double?
        /// Presence at the bedside ("I'm here"), by whom and when.
        public var presentBy: String?
        public var presentAt: Double?
        /// The call reset (done), by whom and when.
        public var resetBy: String?
        public var resetAt: Double?
        /// The bridge's own times (issue 37 item 8): its alert (the alarm incident's `at`, the
        /// alert's `sentAt`, the earlier) and its acknowledgement (the `acknowledged` incident's
        /// `at`). The station's receive times are compressed after an outage; these are not.
        public var bridgeRaisedAt: Double?
        public var bridgeAcknowledgedAt: Double?
        /// When the call escalated because nobody accepted it, and because nobody was present.
        public var unacceptedEscalatedAt: Double?
        public var noPresenceEscalatedAt: Double?
        /// The second tier (`escalate-again-after`): still late that long after the first.
        public var unacceptedAgainAt: Double?
        public var noPresenceAgainAt: Double?

        public init(key: String, device: String, raisedAt: Double) {
            (self.key, self.device, self.raisedAt) = (key, device, raisedAt)
            (alertOut, delivered, resolvedByWearer) = (false, false, false)
        }

        /// `open`, `acknowledged`, `resolved-by-wearer`, `aborted` or `ended`.
        public var outcome: String {
            if acknowledgedBy != nil { return "acknowledged" }
            if resolvedByWearer { return "resolved-by-wearer" }
            if endedAt == nil { return "open" }
            return alertOut || incident != nil ? "ended" : "aborted"
        }

        /// Seconds to acknowledge: from the alert to the acknowledgement by the bridge's clock
        /// when its messages said both, else from raised to acknowledged as the station saw them
        /// (nil: not acknowledged, or not seen live).
        public var secondsToAcknowledge: Double? {
            if let a = bridgeAcknowledgedAt, let r = bridgeRaisedAt { return max(0, a - r) }
            return acknowledgedAt.map { max(0, $0 - raisedAt) }
        }
        /// Whether ``secondsToAcknowledge`` is by the bridge's clock.
        public var timedByBridge: Bool { bridgeAcknowledgedAt != nil && bridgeRaisedAt != nil }
        /// Seconds from accepted to present, and from present to reset.
        public var secondsToPresence: Double? { acknowledgedAt.flatMap { a in presentAt.map { max(0, $0 - a) } } }
        public var secondsToReset: Double? { presentAt.flatMap { p in resetAt.map { max(0, $0 - p) } } }

        /// Accepted, and not yet reset: the call goes on at the bedside.
        public var inProgress: Bool { acknowledgedAt != nil && resetAt == nil }
        /// An alert out that nobody has accepted and that is not over: what escalates as unaccepted.
        var awaitsAcceptance: Bool { endedAt == nil && alertOut && acknowledgedBy == nil && !resolvedByWearer }
        /// Nobody present and the call not reset: what an accepted call escalates for.
        var awaitsPresence: Bool { presentAt == nil && resetAt == nil }
    }

    /// A step a member of staff takes on a call after accepting it: presence at the bedside
    /// ("I'm here"), then reset (done: the call is closed). The words the bridge is sent.
    public typealias Step = CallStep

    /// Why a call escalated.
    public enum Escalation: String, Sendable, CaseIterable {
        /// Nobody accepted the alarm within `accept-within`.
        case unaccepted
        /// Accepted, and nobody present within `presence-within`.
        case noPresence = "no-presence"
        /// Still nobody, `escalate-again-after` seconds after ``unaccepted``: the second tier.
        case unacceptedAgain = "unaccepted-again"
        /// Still nobody there, `escalate-again-after` seconds after ``noPresence``.
        case noPresenceAgain = "no-presence-again"

        /// The second tier (the senior contact), not the first (the on-call contact).
        public var isSecondTier: Bool { self == .unacceptedAgain || self == .noPresenceAgain }
    }

    /// Records `step` on the call `key` by `by`; the record, or why not (presence needs an
    /// accepted call, reset a presence; each is taken once).
    public mutating func take(_ step: Step, key: String, by: String, at now: Double) -> Result<Record, StepRefused> {
        guard let i = records.firstIndex(where: { $0.key == key }) else { return .failure(.init(why: "no such call")) }
        var r = records[i]
        switch step {
        case .presence:
            guard r.acknowledgedAt != nil || r.acknowledgedBy != nil else { return .failure(.init(why: "nobody has accepted it yet")) }
            guard r.presentAt == nil else { return .failure(.init(why: "\(r.presentBy ?? "someone") is there already")) }
            (r.presentBy, r.presentAt) = (by, now)
        case .reset:
            guard r.presentAt != nil else { return .failure(.init(why: "nobody is there yet (I'm here first)")) }
            guard r.resetAt == nil else { return .failure(.init(why: "reset already")) }
            (r.resetBy, r.resetAt) = (by, now)
        }
        records[i] = r
        return .success(r)
    }

    public struct StepRefused: Error, Equatable { public var why: String }

    /// Seconds past its presence time after which an accepted call no longer escalates.
    public static let missedLate = 600.0

    /// `after` seconds or more since `since`, but not ``missedLate`` past that.
    static func lateNotMissed(since: Double, after: Double, now: Double) -> Bool {
        now - since >= after && now - since < after + missedLate
    }

    /// The calls that are late now and have not escalated for that yet, marked as escalated
    /// (each escalates once per reason): an open alert nobody accepted within `acceptWithin`
    /// seconds of going out, and an accepted one nobody was present at within `presenceWithin`;
    /// with `againAfter` (> 0), each still late that long after its first escalation escalates
    /// once more (the second tier).
    public mutating func escalate(now: Double, acceptWithin: Double, presenceWithin: Double, againAfter: Double = 0)
        -> [(record: Record, why: Escalation)] {
        var out: [(Record, Escalation)] = []
        for i in records.indices {
            var r = records[i]
            if r.awaitsAcceptance, r.unacceptedEscalatedAt == nil, now - (r.alertAt ?? r.raisedAt) >= acceptWithin {
                r.unacceptedEscalatedAt = now
                out.append((r, .unaccepted))
            }
            // One accepted while the station was away, late for more than `missedLate` when it
            // came back, is shown as late but not sent to the on-call contact at start.
            if let accepted = r.acknowledgedAt, r.awaitsPresence, r.noPresenceEscalatedAt == nil,
               Self.lateNotMissed(since: accepted, after: presenceWithin, now: now) {
                r.noPresenceEscalatedAt = now
                out.append((r, .noPresence))
            }
            // The second tier, as the first: an alarm still open and unaccepted escalates however
            // late (someone may still be on the floor); a call accepted long ago with nobody
            // present, late by more than `missedLate` (the station was away, or the tier was only
            // just configured), is not sent at start.
            if againAfter > 0 {
                if let first = r.unacceptedEscalatedAt, r.unacceptedAgainAt == nil, r.awaitsAcceptance, now - first >= againAfter {
                    r.unacceptedAgainAt = now
                    out.append((r, .unacceptedAgain))
                }
                if let first = r.noPresenceEscalatedAt, r.noPresenceAgainAt == nil, r.awaitsPresence,
                   Self.lateNotMissed(since: first, after: againAfter, now: now) {
                    r.noPresenceAgainAt = now
                    out.append((r, .noPresenceAgain))
                }
            }
            records[i] = r
        }
        return out
    }

    /// Every record, oldest first.
    public private(set) var records: [Record]
    /// Device → index in ``records`` of its alarm still open.
    private var open: [String: Int] = [:]
    /// `<device>\n<incident>` → index in ``records`` of its last record.
    private var byIncident: [String: Int] = [:]
    /// Each device's records made in the last hour (the station's clock), oldest first, in two
    /// counts: those begun by a countdown (which the wearer may abort) and those begun as an
    /// alarm (an alert out, a fall or help request).
    private var madeLastHour: [String: [Double]] = [:]
    private var alarmsLastHour: [String: [Double]] = [:]

    /// Records one bridge may open in an hour, of each of the two kinds (issue 40: a bridge
    /// publishing 20,000 alarm cycles made 25,261 records); past it a new one of that bridge is
    /// not recorded (its live state is still shown) and ``capped`` counts it. Apart, so that 30
    /// countdowns aborted within the hour (a restless night's false alarms) never leave a real
    /// alarm without a record, which the escalation to the on-call contact reads.
    public static let alarmsPerHour = 30
    /// Alarms not recorded because their bridge had opened ``alarmsPerHour`` within the hour.
    public private(set) var capped = 0

    /// Equal when the records are (the indexes and the hour's count follow from them, or only
    /// bound what a bridge may add).
    public static func == (a: PastIncidents, b: PastIncidents) -> Bool { a.records == b.records }

    /// The records read back from the station's file (an unended one is its bridge's open alarm).
    public init(records: [Record] = []) {
        self.records = records.sorted { ($0.raisedAt, $0.key) < ($1.raisedAt, $1.key) }
        reindex()
    }

    /// The newest first, raised at or after `since`.
    public func newestFirst(since: Double) -> [Record] { records.filter { $0.raisedAt >= since }.reversed() }

    /// Drops the records raised before `cutoff`; returns how many.
    @discardableResult
    public mutating func drop(before cutoff: Double) -> Int {
        guard let first = records.first, first.raisedAt < cutoff else { return 0 }   // oldest first: nothing to drop
        let before = records.count
        records.removeAll { $0.raisedAt < cutoff }
        reindex()
        return before - records.count
    }

    static let alarmKinds: Set<String> = ["fall", "help-requested"]

    /// Folds one message in (`wearer`, `location` and `floor`: the roster's, if it names the device);
    /// returns the records it made or changed. `retained`: the broker's stored copy (an
    /// incident first seen so is dated by its own `at`, and is not taken as happening now).
    public mutating func apply(topic: String, payload: [UInt8], retained: Bool = false, now: Double, prefix: String = "fallguard",
                               roster: (wearer: String?, location: String?)? = nil, floor: String? = nil) -> [Record] {
        guard topic.hasPrefix(prefix + "/"), !payload.isEmpty else { return [] }
        let rest = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2, !rest[0].isEmpty else { return [] }
        let device = String(rest[0])
        var changed: Set<String> = []
        var made: Set<String> = []
        // Where the changed records are (all of them looked up again after a sort).
        var changedAt: Set<Int> = []
        var resorted = false
        func newRecord(at t: Double, alarm: Bool = true) -> Int? {
            var recent = (alarm ? alarmsLastHour : madeLastHour)[device, default: []].filter { $0 > now - 3_600 }
            guard recent.count < Self.alarmsPerHour else {
                if alarm { alarmsLastHour[device] = recent } else { madeLastHour[device] = recent }
                capped += 1
                return nil
            }
            recent.append(now)
            if alarm { alarmsLastHour[device] = recent } else { madeLastHour[device] = recent }
            var r = Record(key: "\(device)@\(Int64((t * 1000).rounded()))", device: device, raisedAt: t)
            r.wearer = roster?.wearer
            r.location = roster?.location
            r.floor = floor
            changed.insert(r.key)
            made.insert(r.key)
            if let last = records.last, (last.raisedAt, last.key) > (t, r.key) {
                records.append(r)
                records.sort { ($0.raisedAt, $0.key) < ($1.raisedAt, $1.key) }
                reindex()
                resorted = true
                return records.firstIndex { $0.key == r.key }!
            }
            records.append(r)   // the usual case, in order: no sort
            open[device] = records.count - 1
            changedAt.insert(records.count - 1)
            return records.count - 1
        }
        func update(_ i: Int, _ change: (inout Record) -> Void) {
            var r = records[i]
            change(&r)
            if r != records[i] { records[i] = r; changed.insert(r.key); changedAt.insert(i) }
            if let id = r.incident { byIncident[device + "\n" + id] = i }
        }
        /// The record of `incident` on this device: known, or the open alarm that has no id
        /// yet, or (for an alarm, or one seen over) a new one.
        func record(of incident: String, kind: String, at: String?) -> Int? {
            if let i = byIncident[device + "\n" + incident], records[i].device == device, records[i].incident == incident { return i }
            if let i = open[device] {
                if records[i].incident == nil { update(i) { $0.incident = incident }; return i }
                // Another incident while one was open: that one is over.
                update(i) { $0.endedAt = $0.endedAt ?? now }
                open[device] = nil
            }
            let over = !Self.alarmKinds.contains(kind)
            guard !over || kind == "acknowledged" || kind == "resolved-by-wearer" else { return nil }
            let dated = (retained || over) ? Self.bridgeTime(at, now: now) : nil
            guard let i = newRecord(at: dated ?? now) else { return nil }
            update(i) { $0.incident = incident }
            if over {
                update(i) { $0.endedAt = $0.raisedAt }
                open[device] = nil
            }
            return i
        }
        let text = String(decoding: payload, as: UTF8.self)
        switch rest[1] {
        case "state":
            switch text {
            case "countdown", "alert-out":
                guard let i = open[device] ?? newRecord(at: now, alarm: text == "alert-out") else { break }
                if text == "alert-out" { update(i) { $0.alertOut = true; $0.alertAt = $0.alertAt ?? now } }
            case "monitoring":
                if let i = open[device] {
                    update(i) { $0.endedAt = now }
                    open[device] = nil
                }
            default: break
            }
        case "incident":
            guard let p = try? JSONDecoder().decode(LastIncidentReport.self, from: Data(payload)),
                  let i = record(of: p.incident, kind: p.kind, at: p.at) else { break }
            update(i) { r in
                if Self.alarmKinds.contains(p.kind) {
                    r.kind = r.kind ?? p.kind; r.alertOut = true; r.alertAt = r.alertAt ?? now
                    if let t = Self.bridgeTime(p.at, now: now), r.bridgeRaisedAt.map({ t < $0 }) ?? true { r.bridgeRaisedAt = t }
                }
                if p.kind == "acknowledged", r.bridgeAcknowledgedAt == nil, !made.contains(r.key) {
                    r.bridgeAcknowledgedAt = Self.bridgeTime(p.at, now: now)
                }
                if p.delivered == true { r.delivered = true }
                if let who = p.reachedBy { r.reachedBy = who }
                if p.kind == "acknowledged" || p.acknowledgedBy != nil, r.acknowledgedBy == nil {
                    r.acknowledgedBy = p.acknowledgedBy ?? "someone"
                    // Seen as it happened: now; a retained copy (the station was down then):
                    // the bridge's time of it; an alarm never seen open: no duration.
                    if !made.contains(r.key) { r.acknowledgedAt = retained ? (Self.bridgeTime(p.at, now: now) ?? now) : now }
                }
                if p.kind == "resolved-by-wearer" { r.resolvedByWearer = true }
                // Presence by the bridge's own button (a long press after the station's
                // acknowledgement): the step in the name of the member who accepted the call.
                if let who = p.presentBy, r.acknowledgedBy != nil, r.presentAt == nil {
                    r.presentBy = Self.viaBridgeButton(who)
                    r.presentAt = retained || r.acknowledgedAt == nil ? (p.presentAt.flatMap(Self.parseTime) ?? now) : now
                }
            }
        case "alert":
            guard let a = try? JSONDecoder().decode(SiteModel.AlertPayload.self, from: Data(payload)) else { break }
            let kind = a.alert.kind
            guard Self.alarmKinds.contains(kind) || kind == "acknowledged" || kind == "resolved-by-wearer",
                  let i = record(of: a.alert.incident, kind: kind, at: nil) else { break }
            update(i) { r in
                if r.wearer == nil, !a.wearer.name.isEmpty { r.wearer = a.wearer.name }
                if Self.alarmKinds.contains(kind) {
                    r.kind = r.kind ?? kind; r.alertOut = true; r.alertAt = r.alertAt ?? now
                    if let t = Self.bridgeTime(a.sentAt, now: now), r.bridgeRaisedAt.map({ t < $0 }) ?? true { r.bridgeRaisedAt = t }
                }
                if kind == "acknowledged", r.acknowledgedBy == nil {
                    r.acknowledgedBy = a.alert.acknowledgedBy ?? "someone"
                    if !made.contains(r.key) { r.acknowledgedAt = now }
                }
                if kind == "resolved-by-wearer" { r.resolvedByWearer = true }
            }
        default:
            break
        }
        if resorted { return records.filter { changed.contains($0.key) } }
        return changedAt.sorted().map { records[$0] }
    }

    /// `Anna Smith (station)` → `Anna Smith (bridge button)`: who took the presence step, and how.
    public static func viaBridgeButton(_ acceptedBy: String) -> String {
        let name = acceptedBy.hasSuffix(" (station)") ? String(acceptedBy.dropLast(" (station)".count)) : acceptedBy
        return String(name.prefix(100)) + " (bridge button)"
    }

    private mutating func reindex() {
        open = [:]
        byIncident = [:]
        for (i, r) in records.enumerated() {
            if r.endedAt == nil { open[r.device] = i }
            if let id = r.incident { byIncident[r.device + "\n" + id] = i }
        }
    }

    /// A time a bridge's message states (its `at`, `sentAt`), as Unix seconds, never later than
    /// the receiver's clock `now` (issue 40: a retained incident dated 9999 would stay on top of
    /// the history and never be pruned); nil when absent or not a time.
    public static func bridgeTime(_ s: String?, now: Double) -> Double? {
        s.flatMap(parseTime).map { min($0, now) }
    }

    /// An ISO 8601 time (the bridges' `at`) as Unix seconds.
    public static func parseTime(_ s: String) -> Double? { secondsSince1970(iso8601: s) }
}
