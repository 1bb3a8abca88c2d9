import FallGuardCore
import Foundation
import GRDB
import Logging
import Synchronization

/// The durable outbox: a SQLite file (WAL, `synchronous=FULL`) in the state directory.
///
/// ``enqueue(_:)`` renders the alert and commits it with all its deliveries in one transaction
/// before anything is sent; a ``DeliveryWorker`` then sends them, retries, and escalates. Every
/// delivery keeps the idempotency key it got at enqueue, across retries and restarts.
public final class Outbox: AlertSink, Sendable {
    public let path: String
    let store: SQLiteStore
    /// The database; throws ``OutboxUnavailable`` while the file cannot be opened.
    var db: DatabasePool { get throws { try store.pool() } }
    /// The settings and what is derived from them, replaced as one by ``update(settings:)``.
    private let current: Mutex<(settings: NotificationSettings, planner: DeliveryPlanner, renderer: MessageRenderer)>
    /// Contacts, policy, templates: what new alerts and escalations use.
    public var settings: NotificationSettings { current.withLock { $0.settings } }
    var planner: DeliveryPlanner { current.withLock { $0.planner } }
    var renderer: MessageRenderer { current.withLock { $0.renderer } }
    let logger: Logger
    /// Unix time now, in seconds (tests move it).
    let now: @Sendable () -> Double
    /// The clock `now` reads when the outbox keeps its times on a ``SteadyWallClock`` (the
    /// daemon's), and from when (on it) its times are this process's: ``followWallClock(tolerance:)``.
    let steady: SteadyWallClock?
    private let steadySince = Mutex(0.0)
    let wake = WakeSignal()
    /// Countdowns this instance armed and has not released or disarmed: incident → alert row
    /// and the uid its keys start with.
    let armedAlerts = Mutex<[String: (id: Int64, uid: String)]>([:])
    /// What became of alarms' messages (accepted, a person reached or not, replies), in order,
    /// for the alarm and the status; the newest 256 are kept while nobody reads.
    public let progress: AsyncStream<DeliveryProgress>
    let progressFeed: AsyncStream<DeliveryProgress>.Continuation
    /// The outbox file's name in the state directory.
    public static let fileName = "outbox.sqlite"

    /// Opens or creates the outbox file at `path`; pending deliveries in it resume when a worker runs.
    public convenience init(path: String, settings: NotificationSettings, logger: Logger = Logger(label: "fallguard.outbox"),
                            now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) throws {
        self.init(path: path, settings: settings, logger: logger, now: now, folderCheck: { nil })
        try store.openNow()
    }

    /// The outbox at `path`, not opened yet: ``retryOpen()`` opens it (at most once a second;
    /// nil once open, else why not) and every other use throws until then: the daemon starts on a
    /// read-only or full disk, or in a state directory it must not use (`folderCheck` says
    /// why, nil when the folder may be used), and stores alerts once the file opens.
    public init(path: String, settings: NotificationSettings, logger: Logger = Logger(label: "fallguard.outbox"),
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                folderCheck: @escaping @Sendable () -> String?) {
        steady = nil
        self.path = path
        store = SQLiteStore(path: path, migrator: OutboxSchema.migrator, folderCheck: folderCheck)
        current = Mutex(Self.derive(settings))
        self.logger = logger
        self.now = now
        (progress, progressFeed) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    /// The outbox at `path` keeping its times on `clock`: a step of the wall clock neither
    /// sends a scheduled retry, escalation or countdown fallback at once nor holds it back
    /// (``followWallClock(tolerance:)``).
    public init(path: String, settings: NotificationSettings, logger: Logger = Logger(label: "fallguard.outbox"),
                clock: SteadyWallClock, folderCheck: @escaping @Sendable () -> String?) {
        self.path = path
        store = SQLiteStore(path: path, migrator: OutboxSchema.migrator, folderCheck: folderCheck)
        current = Mutex(Self.derive(settings))
        self.logger = logger
        now = { clock.now() }
        steady = clock
        steadySince.withLock { $0 = clock.now() }
        (progress, progressFeed) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    /// When the wall clock was stepped by more than `tolerance` seconds away from the outbox's
    /// clock: every time this process kept (the schedule of pending and armed deliveries, when
    /// alerts were made and sent, their deadlines and escalations, acknowledged, followed up) moves by the step in one
    /// transaction and the clock follows it, so each wait keeps its length and the times come
    /// back to the time of day. Times an earlier process kept are left as they are. Returns the
    /// step and how many deliveries' schedules moved; nil without a step (or a steady clock).
    @discardableResult
    public func followWallClock(tolerance: Double = 1) throws -> (step: Double, rescheduled: Int)? {
        guard let steady, let delta = steady.step(tolerance: tolerance) else { return nil }
        let since = steadySince.withLock { $0 }
        let moved = try db.write { db -> Int in
            try db.execute(sql: """
                UPDATE delivery SET next_attempt_at = next_attempt_at + ?1
                WHERE state IN ('pending', 'armed') AND next_attempt_at >= ?2
                """, arguments: [delta, since])
            let moved = db.changesCount
            // Every time column the outbox writes from its clock (a reply's sent_at is the provider's).
            for (table, column) in [("alert", "created_at"), ("delivery", "created_at"), ("delivery", "deadline"),
                                    ("delivery", "last_attempt_at"), ("delivery", "finished_at"), ("delivery", "outcome_at"),
                                    ("incident", "escalation_due"), ("incident", "acknowledged_at"), ("reply", "read_at")] {
                try db.execute(sql: "UPDATE \(table) SET \(column) = \(column) + ?1 WHERE \(column) >= ?2", arguments: [delta, since])
            }
            // Followed inside the write: a reader meets the moved times with the old clock only
            // for the instant of this commit.
            steady.follow(delta)
            steadySince.withLock { $0 += delta }
            return moved
        }
        logger.notice("the wall clock was stepped by \(String(format: "%+.1f", delta)) s: \(moved) scheduled deliveries moved with it (each wait keeps its length)")
        wake.signal()
        return (delta, moved)
    }

    /// Nil while the file is open; otherwise why not, as of the last attempt. Reads only: the
    /// health and status services read it every second, ``retryOpen()`` tries again.
    public var unavailable: String? { store.unopened }

    /// Opens the file if it is not open and the last attempt is a second old (the daemon's
    /// health service, once a second); returns why it is still not open, nil once it is.
    @discardableResult public func retryOpen() -> String? { store.openIfDue() }

    private static func derive(_ settings: NotificationSettings)
        -> (settings: NotificationSettings, planner: DeliveryPlanner, renderer: MessageRenderer) {
        (settings, DeliveryPlanner(settings: settings),
         MessageRenderer(templates: settings.templates, wearer: settings.wearer, device: settings.device))
    }

    /// New settings (SIGHUP): alerts enqueued from now on, and escalations, use them; deliveries
    /// already committed keep their rendered messages and keys.
    public func update(settings: NotificationSettings) {
        current.withLock { $0 = Self.derive(settings) }
        wake.signal()
    }

    /// The alert sink: commits `alert` and its deliveries, then wakes the worker. Returns once
    /// the alert is durable; throws only if that commit failed.
    public func enqueue(_ alert: Alert) throws {
        _ = try enqueue(alert, test: false)
    }

    /// ``AlertSink``: the alarm controller's hand-off. For an incident whose countdown this
    /// outbox armed, a fall alert releases the held deliveries (already on disk, same keys) and
    /// any other alert (a help request) replaces them; otherwise the same as ``enqueue(_:)``.
    public func deliver(_ alert: Alert) throws {
        try deliver(alert, uid: nil, settled: [:])
    }

    /// ``deliver(_:)`` with the keys' `uid` fixed beforehand (``handOffUID(for:)``) and the
    /// deliveries already `settled` outside the outbox (idempotency key → `sent` or `failed`),
    /// which are stored as such and not sent again. A failure leaves an armed countdown armed,
    /// so that a retry releases or replaces it.
    func deliver(_ alert: Alert, uid: String?, settled: [String: String]) throws {
        guard let armed = armedAlerts.withLock({ $0.removeValue(forKey: alert.incident) }) else {
            _ = try enqueue(alert, test: false, replacingArmed: nil, uid: uid, settled: settled)
            return
        }
        do {
            if alert.kind == .fall {
                try release(alertID: armed.id, as: alert, settled: settled)
            } else {
                _ = try enqueue(alert, test: false, replacingArmed: armed.id, uid: uid, settled: settled)
            }
        } catch {
            armedAlerts.withLock { $0[alert.incident] = armed }
            throw error
        }
    }

    /// The uid the keys of `alert` will start with once the outbox takes it: an armed
    /// countdown's own for its fall alert, a new one otherwise.
    func handOffUID(for alert: Alert) -> String {
        if alert.kind == .fall, let armed = armedAlerts.withLock({ $0[alert.incident] }) { return armed.uid }
        return StoredAlert.newUID()
    }

    /// The deliveries `alert` gets under `uid`, rendered now without touching the file: what a
    /// direct send uses when the outbox cannot take the alert.
    func plannedDeliveries(of alert: Alert, uid: String) -> [Delivery] {
        let date = Date(timeIntervalSince1970: now())
        let stored = StoredAlert(id: 0, uid: uid, alert: alert, message: renderer.render(alert, at: date, test: false),
                                 test: false, sentAt: renderer.isoTime(date))
        return planner.plan(alert.kind).deliveries.map {
            let key = "\(stored.keyPrefix).\($0.keySuffix)"
            return Delivery(channel: $0.channel, recipient: $0.recipient, payload: payload(of: stored, key: key, channel: $0.channel))
        }
    }

    /// ``AlertSink``: commits `alert` with its deliveries held (`armed`) until `fallback`
    /// seconds from now; a worker sends them then unless ``deliver(_:)`` released them earlier or
    /// ``disarm(incident:reason:)`` cancelled them. Escalation is armed the same way.
    public func arm(_ alert: Alert, fallback seconds: Double) throws {
        let (id, uid, keys) = try commit(alert, test: false, heldFor: seconds, replacingArmed: nil)
        armedAlerts.withLock { $0[alert.incident] = (id, uid) }
        wake.signal()  // the worker's next wake-up is at the fallback time at the latest
        logger.info("countdown armed: the alert is on disk, held \(String(format: "%.1f", seconds)) s unless released or aborted",
                    metadata: ["incident": "\(alert.incident)", "deliveries": "\(keys.count)"])
    }

    /// ``AlertSink``: the countdown of `incident` ended without an alert; its held deliveries
    /// are cancelled (kept in the file, state `cancelled`, with `reason`).
    public func disarm(incident: String, reason: String) throws {
        guard let id = armedAlerts.withLock({ $0.removeValue(forKey: incident) })?.id else { return }
        let t = now()
        let n = try db.write { db -> Int in
            try Self.cancelArmed(alertID: id, reason: reason, at: t, in: db)
            try db.execute(sql: "DELETE FROM incident WHERE incident = ? AND alert_id = ?", arguments: [incident, id])
            return db.changesCount
        }
        logger.info("countdown disarmed: \(reason)", metadata: ["incident": "\(incident)", "escalation-removed": "\(n)"])
    }

    /// Armed deliveries left by an earlier process (it stopped during a countdown): they become
    /// ordinary pending deliveries, due when their countdown would have ended. Returns the
    /// incidents and their due times (Unix seconds). The daemon calls this once at start.
    @discardableResult
    public func resumeInterruptedCountdowns() throws -> [(incident: String, due: Double)] {
        let mine = Set(armedAlerts.withLock { $0.values.map(\.id) })
        let resumed = try db.write { db -> [(String, Double)] in
            let rows = try Row.fetchAll(db, sql: """
                SELECT alert_id, incident, MIN(next_attempt_at) AS due FROM delivery WHERE state = 'armed'
                GROUP BY alert_id ORDER BY due
                """).filter { !mine.contains($0["alert_id"]) }
            for row in rows {
                try db.execute(sql: "UPDATE delivery SET state = 'pending' WHERE alert_id = ? AND state = 'armed'",
                               arguments: [row["alert_id"] as Int64])
            }
            return rows.map { ($0["incident"], $0["due"]) }
        }
        for (incident, due) in resumed {
            let when = due <= now() ? "now" : "in \(String(format: "%.1f", due - now())) s"
            logger.critical("a countdown was interrupted (crash, restart or power cut): its fall alert goes out \(when)",
                            metadata: ["incident": "\(incident)"])
        }
        if !resumed.isEmpty { wake.signal() }
        return resumed.map { (incident: $0.0, due: $0.1) }
    }

    /// Makes the held deliveries of an armed alert due now, with the alert as dispatched (its
    /// message rendered again; the idempotency keys stay).
    private func release(alertID: Int64, as alert: Alert, settled: [String: String]) throws {
        let t = now()
        let date = Date(timeIntervalSince1970: t)
        let message = renderer.render(alert, at: date, test: false)
        let route = settings.policy.route(for: alert.kind)
        let released = try db.write { db -> Int in
            guard var stored = try StoredAlert.fetch(id: alertID, in: db) else { return 0 }
            stored.alert = alert
            stored.message = message
            stored.sentAt = self.renderer.isoTime(date)
            try stored.update(in: db)
            let rows = try Row.fetchAll(db, sql: "SELECT id, delivery_json FROM delivery WHERE alert_id = ? AND state = 'armed'",
                                        arguments: [alertID])
            for row in rows {
                var delivery = try row.delivery()
                delivery.payload = self.payload(of: stored, key: delivery.idempotencyKey, channel: delivery.channel)
                try db.execute(sql: """
                    UPDATE delivery SET state = ?, next_attempt_at = ?, deadline = ?, delivery_json = ? WHERE id = ?
                    """, arguments: [settled[delivery.idempotencyKey] ?? "pending", t, t + route.deadline,
                                     String(decoding: try JSONEncoder().encode(delivery), as: UTF8.self), row["id"] as Int64])
            }
            try db.execute(sql: """
                UPDATE incident SET escalation_due = ? WHERE alert_id = ? AND escalation_due IS NOT NULL AND acknowledged_at IS NULL
                """, arguments: [t + self.settings.policy.acknowledgeWithin, alertID])
            return rows.count
        }
        wake.signal()
        logger.info("countdown expired: held alert released", metadata: ["incident": "\(alert.incident)", "deliveries": "\(released)"])
    }

    /// Cancels the held deliveries of an armed alert.
    private static func cancelArmed(alertID: Int64, reason: String, at t: Double, in db: Database) throws {
        try db.execute(sql: """
            UPDATE delivery SET state = 'cancelled', finished_at = ?, last_error = ? WHERE alert_id = ? AND state = 'armed'
            """, arguments: [t, reason, alertID])
    }

    /// Commits `alert` (marked as a test when `test`) and its deliveries; returns their
    /// idempotency keys.
    @discardableResult
    public func enqueue(_ alert: Alert, test: Bool) throws -> [String] {
        try enqueue(alert, test: test, replacingArmed: nil, uid: nil, settled: [:])
    }

    /// Commits `alert` and its deliveries; cancels, in the same transaction, the held
    /// deliveries of the armed alert `replacingArmed` (a help request during a countdown).
    private func enqueue(_ alert: Alert, test: Bool, replacingArmed armed: Int64?, uid: String?,
                         settled: [String: String]) throws -> [String] {
        let keys = try commit(alert, test: test, heldFor: nil, replacingArmed: armed, uid: uid, settled: settled).keys
        wake.signal()
        logger.info("alert committed", metadata: ["incident": "\(alert.incident)", "kind": "\(alert.kind.rawValue)",
                                                   "deliveries": "\(keys.count)"])
        return keys
    }

    /// Renders `alert` and commits it with its deliveries and escalation in one transaction:
    /// due now, or `armed` and due `heldFor` seconds from now (a countdown's fallback). Cancels
    /// the held deliveries of the armed alert `replacingArmed` in the same transaction. Keys
    /// start with `uid` when given; deliveries in `settled` are stored in the state it gives.
    private func commit(_ alert: Alert, test: Bool, heldFor: Double?, replacingArmed armed: Int64?,
                        uid: String? = nil, settled: [String: String] = [:]) throws -> (id: Int64, uid: String, keys: [String]) {
        let t = now()
        let due = t + (heldFor ?? 0)
        let date = Date(timeIntervalSince1970: due)
        let message = renderer.render(alert, at: date, test: test)
        let (planned, skipped) = planner.plan(alert.kind)
        for s in skipped {
            logger.error("no address for \(s): check the contact's phone / e-mail", metadata: ["incident": "\(alert.incident)"])
        }
        let route = settings.policy.route(for: alert.kind)
        return try db.write { db -> (Int64, String, [String]) in
            if let armed {
                try Self.cancelArmed(alertID: armed, reason: "replaced by the \(alert.kind.rawValue) alert", at: t, in: db)
            }
            let stored = try StoredAlert.insert(alert, uid: uid ?? StoredAlert.newUID(), message: message, test: test, at: t,
                                                sentAt: self.renderer.isoTime(date), in: db)
            let keys = try planned.map {
                try self.insertDelivery($0, of: stored, deadline: due + route.deadline,
                                        state: settled["\(stored.keyPrefix).\($0.keySuffix)"] ?? (heldFor == nil ? "pending" : "armed"),
                                        due: due, in: db)
            }
            try self.updateIncident(for: alert, escalate: route.escalate, alertID: stored.id,
                                    at: due, in: db)
            return (stored.id, stored.uid, keys)
        }
    }

    /// The daily "monitoring is on" message.
    public func enqueueHeartbeat(incident: String = "heartbeat") throws {
        try enqueue(Alert(kind: .heartbeat, incident: incident, time: 0))
    }

    /// Records an acknowledgement for `incident`: no further contact is tried. (The alert
    /// engine's `acknowledged` alert, when enqueued, does the same and tells the others.)
    public func acknowledge(incident: String, by: String) throws {
        let t = now()
        try db.write { db in try Self.markAcknowledged(incident, by: by, at: t, in: db) }
        logger.info("acknowledged", metadata: ["incident": "\(incident)", "by": "\(by)"])
        wake.signal()
    }

    /// Whether any alert of `incident` is in the file.
    public func knows(incident: String) throws -> Bool {
        try db.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM alert WHERE incident = ?)", arguments: [incident]) ?? false
        }
    }

    /// The alarm of the newest incident nobody acknowledged, committed at or after `since` (Unix
    /// seconds): what a previous process left out and the alarm must take over at start.
    public func openAlarm(since: Double) throws -> Alert? {
        try db.read { db in
            let id = try Int64.fetchOne(db, sql: """
                SELECT alert.id FROM incident JOIN alert ON alert.id = incident.alert_id
                WHERE incident.acknowledged_at IS NULL AND alert.created_at >= ? ORDER BY alert.created_at DESC LIMIT 1
                """, arguments: [since])
            return try id.flatMap { try StoredAlert.fetch(id: $0, in: db)?.alert }
        }
    }

    /// The counters and gauges of the outbox, read from the file.
    public func metrics() throws -> OutboxMetrics {
        let t = now()
        return try db.read { db in try OutboxMetrics.read(db, now: t) }
    }

    /// Every delivery of `incident` (all when nil), oldest first: what the outbox knows; only
    /// the `newest` so many when given.
    public func deliveries(incident: String? = nil, newest: Int? = nil) throws -> [DeliveryRecord] {
        try db.read { db in
            let filter = incident == nil ? "" : "WHERE incident = ?"
            var arguments: StatementArguments = incident.map { [$0] } ?? []
            if let newest { arguments += [newest] }
            let sql = newest == nil ? "SELECT * FROM delivery \(filter) ORDER BY id"
                : "SELECT * FROM (SELECT * FROM delivery \(filter) ORDER BY id DESC LIMIT ?) ORDER BY id"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(DeliveryRecord.init(row:))
        }
    }

    /// Inserts one delivery, due now unless `due` says otherwise; returns its idempotency key.
    func insertDelivery(_ p: PlannedDelivery, of alert: StoredAlert, deadline: Double, state: String = "pending",
                        due: Double? = nil, in db: Database) throws -> String {
        let key = "\(alert.keyPrefix).\(p.keySuffix)"
        let json = try JSONEncoder().encode(Delivery(channel: p.channel, recipient: p.recipient,
                                                     payload: payload(of: alert, key: key, channel: p.channel)))
        let t = now()
        try db.execute(sql: """
            INSERT INTO delivery (alert_id, incident, idempotency_key, channel, role, contact_index, delivery_json,
                                  state, created_at, next_attempt_at, deadline)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [alert.id, alert.alert.incident, key, p.channel, p.role.rawValue, p.contactIndex,
                             String(decoding: json, as: UTF8.self), state, t, due ?? t, deadline])
        return key
    }

    /// What a delivery of `alert` through `channel` carries, under its own key (the location
    /// only where ``NotificationSettings/carriesLocation(_:)``).
    private func payload(of alert: StoredAlert, key: String, channel: String) -> AlertPayload {
        settings.payload(AlertPayload(idempotencyKey: key, test: alert.test, device: settings.device, wearer: settings.wearer,
                                      alert: alert.alert, message: alert.message, sentAt: alert.sentAt), for: channel)
    }

    /// Stops escalation of `incident`: someone took it.
    private static func markAcknowledged(_ incident: String, by: String, at t: Double, in db: Database) throws {
        try db.execute(sql: """
            UPDATE incident SET escalation_due = NULL, acknowledged_by = ?, acknowledged_at = ?
            WHERE incident = ? AND acknowledged_at IS NULL
            """, arguments: [by, t, incident])
    }

    private func updateIncident(for alert: Alert, escalate: Bool, alertID: Int64, at t: Double,
                                in db: Database) throws {
        switch alert.kind {
        case .fall, .helpRequested:
            // The incident's route: the alert kind, `fall` or `help-requested`.
            let routeKey = alert.kind.rawValue
            guard escalate, !settings.contacts.isEmpty else { return }
            // A new alarm (or a help request during one) starts escalation from the primary contact.
            // It escalates along the contacts as they are now, whatever a reload does meanwhile.
            let contacts = String(decoding: try JSONEncoder().encode(settings.contacts), as: UTF8.self)
            try db.execute(sql: """
                INSERT INTO incident (incident, alert_id, route, responsible, escalation_due, contacts_json) VALUES (?, ?, ?, 0, ?, ?)
                ON CONFLICT(incident) DO UPDATE SET alert_id = excluded.alert_id, route = excluded.route,
                    responsible = 0, escalation_due = excluded.escalation_due, acknowledged_by = NULL, acknowledged_at = NULL,
                    contacts_json = excluded.contacts_json
                """, arguments: [alert.incident, alertID, routeKey, t + settings.policy.acknowledgeWithin, contacts])
        case .acknowledged, .resolvedByWearer:
            let by = alert.acknowledgedBy ?? (alert.kind == .resolvedByWearer ? "the wearer" : "a helper")
            try Self.markAcknowledged(alert.incident, by: by, at: t, in: db)
        default:
            break
        }
    }
}
