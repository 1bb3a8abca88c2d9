import FallGuardFieldTest
import FallGuardNotify
import FallGuardStation
import FallGuardWeb
import Foundation
import GRDB
import Logging
import Synchronization

/// The station's past incidents (``PastIncidents``) kept in a SQLite file in its state
/// directory (a ``SQLiteStore``, as the bridge's outbox: WAL, `synchronous=FULL`, the folder
/// and the file checked before opening), so that a restart of the station forgets none of
/// the last days' alarms. Records older than `days` are dropped from memory and from the file
/// at start and whenever something changes or the list is read.
///
/// While the file cannot be opened (a state directory the station must not use, a full disk)
/// the records are kept in memory, it is tried again at most once a second, and everything
/// is written once it opens; ``problem`` says why meanwhile.
final class StationHistory: Sendable {
    static let fileName = "station.sqlite"
    let store: SQLiteStore
    let days: Int
    private let logger: Logger
    private let state: Mutex<State>
    /// The records as last changed, for the page (``current(now:)``): copied before each write,
    /// so that a poll of `/site.json` never waits for a SQLite commit (`synchronous=FULL`, an
    /// fsync: seconds on a busy disk, while a flood's batch holds ``state``; issue 40).
    private let view: Mutex<PastIncidents>

    struct State {
        var incidents: PastIncidents
        /// An earlier write failed: everything is written at the next.
        var unsaved: Bool
        /// The escalations' messages no channel has taken yet (``EscalationDelivery``).
        var pending: [EscalationDelivery]
        /// Those being sent now (not handed out twice).
        var sending: Set<String> = []
    }

    /// An escalation's message to one contact through one station channel, kept in the file
    /// from the moment the call escalated until the channel took it (or gave up for good): a
    /// restart of the station sends what it had not sent, and nothing is marked sent before.
    struct EscalationDelivery: Sendable, Equatable {
        /// `<record key>/<why>/<channel>`.
        var id: String
        var recordKey: String
        var why: PastIncidents.Escalation
        var delivery: Delivery
        var createdAt: Double
        var nextAt: Double
        var attempts: Int
    }

    init(directory: String, days: Int, logger: Logger, now: Double = Date().timeIntervalSince1970) {
        store = SQLiteStore(path: directory + "/" + Self.fileName, migrator: Self.migrator, folderCheck: { StateFiles.prepare(directory) })
        self.days = days
        self.logger = logger
        var records: [PastIncidents.Record] = []
        var pending: [EscalationDelivery] = []
        var unsaved = false
        do {
            try store.openNow()
            (records, pending) = try store.pool().read { db in
                (try PastIncidents.Record.fetchAll(db, sql: "SELECT * FROM past_incident"),
                 try Row.fetchAll(db, sql: "SELECT * FROM escalation_delivery WHERE state = 'pending' ORDER BY created_at").compactMap(Self.delivery))
            }
            if !pending.isEmpty { logger.notice("station: \(pending.count) escalation messages not sent before the restart: sending them now") }
        } catch {
            logger.error("station: past incidents kept in memory only, not in \(store.path): \(error)")
            unsaved = true
        }
        state = Mutex(State(incidents: PastIncidents(records: records), unsaved: unsaved, pending: pending))
        view = Mutex(PastIncidents(records: records))
        prune(now: now)
    }

    var cutoffSeconds: Double { Double(days) * 86_400 }

    /// Why the records are not in the file now (nil: they are).
    var problem: String? { store.failure }

    /// Folds a message in and writes what changed.
    func apply(topic: String, payload: [UInt8], retained: Bool, now: Double, prefix: String,
               roster: (wearer: String?, location: String?)?, floor: String? = nil) {
        apply([StationInbox.Message(topic: topic, payload: payload, retained: retained, at: now)], now: now, prefix: prefix,
              roster: { _ in roster.map { ($0.wearer, $0.location, floor) } })
    }

    /// Folds messages in, in order, and writes what they changed in one transaction (issue 40:
    /// a flood is written in batches, not a transaction a message). Returns how many alarms
    /// were not recorded because their bridge had opened ``PastIncidents/alarmsPerHour`` within the hour.
    /// `roster`: the resident a device watches over (name, room, floor), from `station.residents`.
    @discardableResult
    func apply(_ messages: [StationInbox.Message], now: Double, prefix: String,
               roster: (String) -> (wearer: String?, location: String?, floor: String?)?) -> Int {
        let capped: Int = state.withLock { s in
            let before = s.incidents.capped
            var changed: [String: PastIncidents.Record] = [:]
            for m in messages {
                let device = StationServer.device(of: m.topic, prefix: prefix)
                let resident = device.flatMap(roster)
                for r in s.incidents.apply(topic: m.topic, payload: m.payload, retained: m.retained, now: m.at, prefix: prefix,
                                           roster: resident.map { ($0.wearer, $0.location) }, floor: resident?.floor) {
                    changed[r.key] = r
                }
            }
            if !changed.isEmpty { publish(s) }
            if !changed.isEmpty { save(Array(changed.values), &s) }
            return s.incidents.capped - before
        }
        prune(now: now)
        return capped
    }

    /// The records raised in the last `days`, newest first.
    func newestFirst(now: Double) -> [PastIncidents.Record] {
        prune(now: now)
        return state.withLock { $0.incidents.newestFirst(since: now - cutoffSeconds) }
    }

    /// The records raised in the last `days`, newest first, as last changed: never waits for a write.
    func current(now: Double) -> [PastIncidents.Record] {
        view.withLock { $0 }.newestFirst(since: now - cutoffSeconds)
    }

    private func publish(_ s: State) { view.withLock { $0 = s.incidents } }

    /// Records a step of a call (presence, reset) and writes it.
    func take(_ step: PastIncidents.Step, key: String, by: String, now: Double) -> Result<PastIncidents.Record, PastIncidents.StepRefused> {
        state.withLock { s in
            let result = s.incidents.take(step, key: key, by: by, at: now)
            if case let .success(r) = result { publish(s); save([r], &s) }
            return result
        }
    }

    /// The calls late now (``PastIncidents/escalate(now:acceptWithin:presenceWithin:againAfter:)``),
    /// marked, with their messages (`deliveries`) pending, in one write: each escalates once,
    /// and each message is sent until a channel takes it (``dueDeliveries(now:)``).
    func escalate(now: Double, acceptWithin: Double, presenceWithin: Double, againAfter: Double,
                  deliveries: (PastIncidents.Record, PastIncidents.Escalation) -> [Delivery])
        -> [(record: PastIncidents.Record, why: PastIncidents.Escalation)] {
        state.withLock { s in
            let due = s.incidents.escalate(now: now, acceptWithin: acceptWithin, presenceWithin: presenceWithin, againAfter: againAfter)
            guard !due.isEmpty else { return due }
            let new = due.flatMap { r, why in
                deliveries(r, why).map { d in
                    EscalationDelivery(id: "\(r.key)/\(why.rawValue)/\(d.channel)", recordKey: r.key, why: why, delivery: d,
                                       createdAt: now, nextAt: now, attempts: 0)
                }
            }
            s.pending += new
            publish(s)
            save(due.map(\.record), &s, deliveries: new)
            return due
        }
    }

    /// The escalation messages due now, each handed out once until ``sent(_:at:detail:)`` or
    /// ``failed(_:at:detail:retryAt:)`` says what became of it.
    func dueDeliveries(now: Double) -> [EscalationDelivery] {
        state.withLock { s in
            let due = s.pending.filter { $0.nextAt <= now && !s.sending.contains($0.id) }
            s.sending.formUnion(due.map(\.id))
            return due
        }
    }

    /// A channel took the message: marked sent now (not before).
    func sent(_ id: String, at now: Double, detail: String) {
        finish(id, state: "sent", at: now, detail: detail, retryAt: nil)
    }

    /// The channel did not take it: tried again at `retryAt`, or given up (nil).
    func failed(_ id: String, at now: Double, detail: String, retryAt: Double?) {
        finish(id, state: retryAt == nil ? "failed" : "pending", at: now, detail: detail, retryAt: retryAt)
    }

    /// Every escalation message and what became of it, oldest first: (id, state, attempts, sent).
    func escalationDeliveries() -> [(id: String, state: String, attempts: Int, sentAt: Double?)] {
        (try? store.pool().read { db in
            try Row.fetchAll(db, sql: "SELECT id, state, attempts, sent_at FROM escalation_delivery ORDER BY created_at, id").map {
                (id: $0["id"], state: $0["state"], attempts: $0["attempts"], sentAt: $0["sent_at"])
            }
        }) ?? []
    }

    private func finish(_ id: String, state result: String, at now: Double, detail: String, retryAt: Double?) {
        state.withLock { s in
            s.sending.remove(id)
            guard let i = s.pending.firstIndex(where: { $0.id == id }) else { return }
            s.pending[i].attempts += 1
            if let retryAt { s.pending[i].nextAt = retryAt }
            let d = s.pending[i]
            if retryAt == nil { s.pending.remove(at: i) }
            do {
                try store.pool().write { db in
                    try Self.upsert(d, db)
                    try db.execute(sql: "UPDATE escalation_delivery SET state = ?, detail = ?, sent_at = ? WHERE id = ?",
                                   arguments: [result, String(detail.prefix(500)), result == "sent" ? now : nil, id])
                }
            } catch {
                logger.error("station: what became of the escalation message \(id) is not kept in \(store.path): \(error)")
            }
        }
    }

    /// Drops what is older than the retention, from memory and from the file.
    func prune(now: Double) {
        let cutoff = now - cutoffSeconds
        state.withLock { s in
            let dropped = s.incidents.drop(before: cutoff)
            if dropped > 0 { publish(s) }
            if s.unsaved { save([], &s); return }
            guard dropped > 0 else { return }
            do {
                try store.pool().write { db in try db.execute(sql: "DELETE FROM past_incident WHERE raised_at < ?", arguments: [cutoff]) }
            } catch {
                logger.error("station: cannot drop old incidents from \(store.path): \(error)")
            }
        }
    }

    /// Writes `changed` and the new escalation `deliveries`, or everything when an earlier
    /// write failed.
    private func save(_ changed: [PastIncidents.Record], _ s: inout State, deliveries: [EscalationDelivery] = []) {
        let all = s.unsaved
        let rows = all ? s.incidents.records : changed
        do {
            try store.openNow()   // at most one attempt a second while it cannot be opened
            try store.pool().write { db in
                if all { try db.execute(sql: "DELETE FROM past_incident") }
                for r in rows { try Self.upsert(r, db) }
                for d in all ? s.pending : deliveries { try Self.upsert(d, db) }
            }
            if all { logger.notice("station: past incidents written to \(store.path) (\(rows.count))") }
            s.unsaved = false
        } catch {
            if !s.unsaved { logger.error("station: past incidents kept in memory only, not in \(store.path): \(error)") }
            s.unsaved = true
        }
    }

    /// The page's sessions as last kept (``keep(sessions:)``): a restart of the station signs
    /// nobody out. Empty when the file cannot be read.
    func keptSessions() -> [(user: String?, session: WebAccess.SavedSession)] {
        do {
            try store.openNow()
            return try store.pool().read { db in
                try Row.fetchAll(db, sql: "SELECT user, id, csrf, expires FROM session").map {
                    ($0["user"], WebAccess.SavedSession(id: $0["id"], csrf: $0["csrf"], expires: $0["expires"]))
                }
            }
        } catch {
            logger.error("station: the page's sessions cannot be read from \(store.path): every page signs in again: \(error)")
            return []
        }
    }

    /// Keeps every session valid now in the file (0600, in the state directory), in place of
    /// those kept before; false when it cannot (the sessions then end with the process).
    @discardableResult
    func keep(sessions: [(user: String?, session: WebAccess.SavedSession)]) -> Bool {
        do {
            try store.openNow()
            try store.pool().write { db in
                try db.execute(sql: "DELETE FROM session")
                for (user, s) in sessions {
                    try db.execute(sql: "INSERT INTO session (id, user, csrf, expires) VALUES (?, ?, ?, ?)",
                                   arguments: [s.id, user, s.csrf, s.expires])
                }
            }
            return true
        } catch {
            logger.error("station: the page's sessions are not kept in \(store.path) (a restart signs them out): \(error)")
            return false
        }
    }

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1: past incidents") { db in
            try db.execute(sql: """
                CREATE TABLE past_incident (
                    key TEXT PRIMARY KEY,
                    device TEXT NOT NULL,
                    incident TEXT,
                    kind TEXT,
                    wearer TEXT,
                    location TEXT,
                    raised_at REAL NOT NULL,
                    alert_out INTEGER NOT NULL,
                    delivered INTEGER NOT NULL,
                    reached_by TEXT,
                    acknowledged_by TEXT,
                    acknowledged_at REAL,
                    resolved_by_wearer INTEGER NOT NULL,
                    ended_at REAL
                );
                CREATE INDEX past_incident_raised ON past_incident(raised_at);
                """)
        }
        // Issue 37 item 4: the steps of a call. A call acknowledged before they were recorded is
        // taken as reset then (it does not wait for a presence nobody could give).
        m.registerMigration("v2: call steps") { db in
            for column in ["alert_at REAL", "present_by TEXT", "present_at REAL", "reset_by TEXT", "reset_at REAL",
                           "unaccepted_escalated_at REAL", "no_presence_escalated_at REAL",
                           "bridge_raised_at REAL", "bridge_acknowledged_at REAL"] {
                try db.execute(sql: "ALTER TABLE past_incident ADD COLUMN \(column)")
            }
            try db.execute(sql: "UPDATE past_incident SET reset_at = acknowledged_at WHERE acknowledged_at IS NOT NULL")
        }
        // Issue 37: sessions survive a restart (user NULL: a display's).
        m.registerMigration("v3: sessions") { db in
            try db.execute(sql: "CREATE TABLE session (id TEXT PRIMARY KEY, user TEXT, csrf TEXT NOT NULL, expires REAL NOT NULL)")
        }
        // Issue 37: the second tier, and the escalations' messages kept until a channel took them.
        m.registerMigration("v4: durable escalations") { db in
            for column in ["unaccepted_again_at REAL", "no_presence_again_at REAL", "floor TEXT"] {
                try db.execute(sql: "ALTER TABLE past_incident ADD COLUMN \(column)")
            }
            try db.execute(sql: """
                CREATE TABLE escalation_delivery (
                    id TEXT PRIMARY KEY,
                    record_key TEXT NOT NULL,
                    why TEXT NOT NULL,
                    delivery_json TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    next_at REAL NOT NULL,
                    attempts INTEGER NOT NULL,
                    state TEXT NOT NULL DEFAULT 'pending',
                    sent_at REAL,
                    detail TEXT
                )
                """)
        }
        return m
    }

    static func upsert(_ r: PastIncidents.Record, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO past_incident (key, device, incident, kind, wearer, location, raised_at, alert_out, delivered, reached_by,
                                       acknowledged_by, acknowledged_at, resolved_by_wearer, ended_at, alert_at, present_by, present_at,
                                       reset_by, reset_at, unaccepted_escalated_at, no_presence_escalated_at, bridge_raised_at,
                                       bridge_acknowledged_at, unaccepted_again_at, no_presence_again_at, floor)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET incident = excluded.incident, kind = excluded.kind, wearer = excluded.wearer,
                location = excluded.location, alert_out = excluded.alert_out, delivered = excluded.delivered,
                reached_by = excluded.reached_by, acknowledged_by = excluded.acknowledged_by,
                acknowledged_at = excluded.acknowledged_at, resolved_by_wearer = excluded.resolved_by_wearer, ended_at = excluded.ended_at,
                alert_at = excluded.alert_at, present_by = excluded.present_by, present_at = excluded.present_at,
                reset_by = excluded.reset_by, reset_at = excluded.reset_at, unaccepted_escalated_at = excluded.unaccepted_escalated_at,
                no_presence_escalated_at = excluded.no_presence_escalated_at, bridge_raised_at = excluded.bridge_raised_at,
                bridge_acknowledged_at = excluded.bridge_acknowledged_at, unaccepted_again_at = excluded.unaccepted_again_at,
                no_presence_again_at = excluded.no_presence_again_at, floor = excluded.floor
            """, arguments: [r.key, r.device, r.incident, r.kind, r.wearer, r.location, r.raisedAt, r.alertOut, r.delivered, r.reachedBy,
                             r.acknowledgedBy, r.acknowledgedAt, r.resolvedByWearer, r.endedAt, r.alertAt, r.presentBy, r.presentAt,
                             r.resetBy, r.resetAt, r.unacceptedEscalatedAt, r.noPresenceEscalatedAt, r.bridgeRaisedAt, r.bridgeAcknowledgedAt,
                             r.unacceptedAgainAt, r.noPresenceAgainAt, r.floor])
    }

    static func upsert(_ d: EscalationDelivery, _ db: Database) throws {
        let json = String(decoding: try JSONEncoder().encode(d.delivery), as: UTF8.self)
        try db.execute(sql: """
            INSERT INTO escalation_delivery (id, record_key, why, delivery_json, created_at, next_at, attempts)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET next_at = excluded.next_at, attempts = excluded.attempts
            """, arguments: [d.id, d.recordKey, d.why.rawValue, json, d.createdAt, d.nextAt, d.attempts])
    }

    static func delivery(_ row: Row) -> EscalationDelivery? {
        guard let why = PastIncidents.Escalation(rawValue: row["why"]),
              let d = try? row.delivery() else { return nil }
        return EscalationDelivery(id: row["id"], recordKey: row["record_key"], why: why, delivery: d,
                                  createdAt: row["created_at"], nextAt: row["next_at"], attempts: row["attempts"])
    }
}

/// A `past_incident` row: its columns are the record's fields in snake case.
extension PastIncidents.Record: FetchableRecord {
    public static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
}
