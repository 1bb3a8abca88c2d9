import FallGuardCore
import Foundation
import GRDB

/// An alert as stored in the outbox, with what every delivery of it carries.
struct StoredAlert {
    var id: Int64
    var uid: String
    var alert: Alert
    var message: RenderedMessage
    var test: Bool
    var sentAt: String

    /// Starts every idempotency key of this alert: `FG-3.fall.1a2b3c4d5e6f`.
    var keyPrefix: String { "\(alert.incident).\(alert.kind.rawValue).\(uid)" }

    /// A new uid: 12 hex digits.
    static func newUID() -> String {
        String(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12))
    }

    static func insert(_ alert: Alert, uid: String, message: RenderedMessage, test: Bool, at t: Double, sentAt: String,
                       in db: Database) throws -> StoredAlert {
        let e = JSONEncoder()
        try db.execute(sql: """
            INSERT INTO alert (uid, incident, kind, test, created_at, sent_at, alert_json, message_json)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [uid, alert.incident, alert.kind.rawValue, test, t, sentAt,
                             String(decoding: try e.encode(alert), as: UTF8.self),
                             String(decoding: try e.encode(message), as: UTF8.self)])
        return StoredAlert(id: db.lastInsertedRowID, uid: uid, alert: alert, message: message, test: test, sentAt: sentAt)
    }

    /// Rewrites the alert and its message (an armed alert released as dispatched).
    func update(in db: Database) throws {
        let e = JSONEncoder()
        try db.execute(sql: "UPDATE alert SET sent_at = ?, alert_json = ?, message_json = ? WHERE id = ?",
                       arguments: [sentAt, String(decoding: try e.encode(alert), as: UTF8.self),
                                   String(decoding: try e.encode(message), as: UTF8.self), id])
    }

    static func fetch(id: Int64, in db: Database) throws -> StoredAlert? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alert WHERE id = ?", arguments: [id]) else { return nil }
        let d = JSONDecoder()
        return StoredAlert(id: row["id"], uid: row["uid"],
                           alert: try d.decode(Alert.self, from: Data((row["alert_json"] as String).utf8)),
                           message: try d.decode(RenderedMessage.self, from: Data((row["message_json"] as String).utf8)),
                           test: row["test"], sentAt: row["sent_at"])
    }
}

/// One delivery row, as tests, `test-alert` and operators see it.
public struct DeliveryRecord: Sendable, Equatable {
    /// `armed`: held for a running countdown (sent at its fallback time unless released or
    /// cancelled); `cancelled`: the countdown was aborted or the alert replaced; `quarantined`:
    /// the row could not be read (kept for inspection, never sent).
    public enum State: String, Sendable, Equatable {
        case armed, pending, sent, failed, cancelled, quarantined

        /// Nothing more will happen to the delivery.
        public var hasEnded: Bool { self != .armed && self != .pending }
    }

    public var id: Int64
    public var incident: String
    public var idempotencyKey: String
    public var channel: String
    public var role: String
    public var contactIndex: Int?
    public var state: State
    public var attempts: Int
    public var lastError: String?
    public var receipt: String?
    public var delivery: Delivery
    /// When it was queued (seconds since 1970).
    public var createdAt: Double

    init(row: Row) throws {
        id = row["id"]
        incident = row["incident"]
        idempotencyKey = row["idempotency_key"]
        channel = row["channel"]
        role = row["role"]
        contactIndex = row["contact_index"]
        state = State(rawValue: row["state"]) ?? .pending
        attempts = row["attempts"]
        lastError = row["last_error"]
        receipt = row["receipt"]
        createdAt = row["created_at"]
        delivery = try row.delivery()
    }
}

extension Row {
    /// The row's `delivery_json`, decoded: the outbox's deliveries and the station's escalation
    /// messages keep a ``Delivery`` in that column.
    package func delivery() throws -> Delivery {
        try JSONDecoder().decode(Delivery.self, from: Data((self["delivery_json"] as String).utf8))
    }
}

/// The outbox's counters and gauges, as one snapshot.
public struct OutboxMetrics: Sendable, Equatable, CustomStringConvertible {
    /// Deliveries ever committed for an alert (armed ones that were cancelled do not count).
    public var queued: Int
    /// Deliveries still to go out.
    public var pending: Int
    /// Deliveries held for a running countdown.
    public var armed: Int
    /// Held deliveries of countdowns that were aborted.
    public var cancelled: Int
    /// Deliveries that went out.
    public var sent: Int
    /// Deliveries given up (permanent failure or deadline passed).
    public var failed: Int
    /// Seconds since the oldest pending delivery was committed; 0 when none is pending.
    public var oldestPendingAge: Double
    /// Rows set aside because they could not be read (see `DeliveryRecord.State.quarantined`).
    public var quarantined: Int = 0

    static func read(_ db: Database, now: Double) throws -> OutboxMetrics {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM delivery GROUP BY state") {
            counts[row["state"]] = row["n"]
        }
        let oldest = try Double.fetchOne(db, sql: "SELECT MIN(created_at) FROM delivery WHERE state = 'pending'")
        let pending = counts["pending"] ?? 0, sent = counts["sent"] ?? 0, failed = counts["failed"] ?? 0
        return OutboxMetrics(queued: pending + sent + failed, pending: pending, armed: counts["armed"] ?? 0,
                             cancelled: counts["cancelled"] ?? 0, sent: sent, failed: failed,
                             oldestPendingAge: oldest.map { max(0, now - $0) } ?? 0, quarantined: counts["quarantined"] ?? 0)
    }

    public var description: String {
        "queued \(queued), pending \(pending), sent \(sent), failed \(failed), oldest pending \(String(format: "%.1f", oldestPendingAge)) s"
            + (armed > 0 ? ", armed \(armed)" : "") + (cancelled > 0 ? ", cancelled \(cancelled)" : "")
            + (quarantined > 0 ? ", QUARANTINED \(quarantined) (unreadable rows)" : "")
    }
}
