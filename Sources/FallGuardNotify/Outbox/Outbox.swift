import FallGuardCore
import Foundation
import GRDB
import Logging

/// The durable outbox: a SQLite file (WAL, `synchronous=FULL`) in the state directory.
///
/// ``enqueue(_:)`` renders the alert and commits it with all its deliveries in one transaction
/// before anything is sent; a ``DeliveryWorker`` then sends them, retries, and escalates. Every
/// delivery keeps the idempotency key it got at enqueue, across retries and restarts.
public final class Outbox: AlertSink, Sendable {
    public let path: String
    public let settings: NotificationSettings
    let db: DatabasePool
    let planner: DeliveryPlanner
    let renderer: MessageRenderer
    let logger: Logger
    /// Unix time now, in seconds (tests move it).
    let now: @Sendable () -> Double
    let wake = WakeSignal()
    /// The outbox file's name in the state directory.
    public static let fileName = "outbox.sqlite"

    /// Opens or creates the outbox file at `path`; pending deliveries in it resume when a worker runs.
    public init(path: String, settings: NotificationSettings, logger: Logger = Logger(label: "fallguard.outbox"),
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) throws {
        self.path = path
        self.settings = settings
        self.db = try OutboxSchema.open(path: path)
        self.planner = DeliveryPlanner(settings: settings)
        self.renderer = MessageRenderer(templates: settings.templates, wearer: settings.wearer, device: settings.device)
        self.logger = logger
        self.now = now
    }

    /// The alert sink: commits `alert` and its deliveries, then wakes the worker. Returns once
    /// the alert is durable; throws only if that commit failed.
    public func enqueue(_ alert: Alert) throws {
        _ = try enqueue(alert, test: false)
    }

    /// ``AlertSink``: the alarm controller's hand-off, the same as ``enqueue(_:)``.
    public func deliver(_ alert: Alert) throws {
        try enqueue(alert)
    }

    /// Commits `alert` (marked as a test when `test`) and its deliveries; returns their
    /// idempotency keys.
    @discardableResult
    public func enqueue(_ alert: Alert, test: Bool) throws -> [String] {
        let t = now()
        let date = Date(timeIntervalSince1970: t)
        let message = renderer.render(alert, at: date, test: test)
        let (planned, skipped) = planner.plan(alert.kind)
        for s in skipped {
            logger.error("no address for \(s): check the contact's phone / e-mail", metadata: ["incident": "\(alert.incident)"])
        }
        let route = settings.policy.route(for: alert.kind)
        let keys = try db.write { db -> [String] in
            let stored = try StoredAlert.insert(alert, message: message, test: test, at: t,
                                                sentAt: self.renderer.isoTime(date), in: db)
            let keys = try planned.map { try self.insertDelivery($0, of: stored, deadline: t + route.route.deadline, in: db) }
            try self.updateIncident(for: alert, routeKey: route.key, escalate: route.route.escalate, alertID: stored.id, at: t, in: db)
            return keys
        }
        wake.signal()
        logger.info("alert committed", metadata: ["incident": "\(alert.incident)", "kind": "\(alert.kind.rawValue)",
                                                   "deliveries": "\(keys.count)"])
        return keys
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

    /// The counters and gauges of the outbox, read from the file.
    public func metrics() throws -> OutboxMetrics {
        let t = now()
        return try db.read { db in try OutboxMetrics.read(db, now: t) }
    }

    /// Every delivery of `incident` (all when nil), oldest first: what the outbox knows.
    public func deliveries(incident: String? = nil) throws -> [DeliveryRecord] {
        try db.read { db in
            let filter = incident == nil ? "" : "WHERE incident = ?"
            return try Row.fetchAll(db, sql: "SELECT * FROM delivery \(filter) ORDER BY id",
                                    arguments: incident.map { [$0] } ?? []).map(DeliveryRecord.init(row:))
        }
    }

    /// Inserts one delivery; returns its idempotency key.
    func insertDelivery(_ p: PlannedDelivery, of alert: StoredAlert, deadline: Double, in db: Database) throws -> String {
        let key = "\(alert.keyPrefix).\(p.keySuffix)"
        let payload = AlertPayload(idempotencyKey: key, test: alert.test, device: settings.device, wearer: settings.wearer,
                                   alert: alert.alert, message: alert.message, sentAt: alert.sentAt)
        let json = try JSONEncoder().encode(Delivery(channel: p.channel, recipient: p.recipient, payload: payload))
        let t = now()
        try db.execute(sql: """
            INSERT INTO delivery (alert_id, incident, idempotency_key, channel, role, contact_index, delivery_json,
                                  created_at, next_attempt_at, deadline)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [alert.id, alert.alert.incident, key, p.channel, p.role.rawValue, p.contactIndex,
                             String(decoding: json, as: UTF8.self), t, t, deadline])
        return key
    }

    /// Stops escalation of `incident`: someone took it.
    private static func markAcknowledged(_ incident: String, by: String, at t: Double, in db: Database) throws {
        try db.execute(sql: """
            UPDATE incident SET escalation_due = NULL, acknowledged_by = ?, acknowledged_at = ?
            WHERE incident = ? AND acknowledged_at IS NULL
            """, arguments: [by, t, incident])
    }

    private func updateIncident(for alert: Alert, routeKey: String, escalate: Bool, alertID: Int64, at t: Double,
                                in db: Database) throws {
        switch alert.kind {
        case .fall, .helpRequested:
            guard escalate, !settings.contacts.isEmpty else { return }
            // A new alarm (or a help request during one) starts escalation from the primary contact.
            try db.execute(sql: """
                INSERT INTO incident (incident, alert_id, route, responsible, escalation_due) VALUES (?, ?, ?, 0, ?)
                ON CONFLICT(incident) DO UPDATE SET alert_id = excluded.alert_id, route = excluded.route,
                    responsible = 0, escalation_due = excluded.escalation_due, acknowledged_by = NULL, acknowledged_at = NULL
                """, arguments: [alert.incident, alertID, routeKey, t + settings.policy.acknowledgeWithin])
        case .acknowledged, .resolvedByWearer:
            let by = alert.acknowledgedBy ?? (alert.kind == .resolvedByWearer ? "the wearer" : "a helper")
            try Self.markAcknowledged(alert.incident, by: by, at: t, in: db)
        default:
            break
        }
    }
}
