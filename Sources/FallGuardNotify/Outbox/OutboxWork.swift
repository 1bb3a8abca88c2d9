import FallGuardCore
import Foundation
import GRDB
import Logging

/// A delivery row's place in its incident's escalation, as the worker and the caregiver
/// follow-up both read it: the row, its incident, its role and the contact's index in the list.
struct DeliveryPlace: Sendable, Equatable {
    var id: Int64
    var incident: String
    /// A ``PlannedDelivery/Role`` raw value.
    var role: String
    var contactIndex: Int?

    /// The `id`, `incident`, `role` and `contact_index` columns of a `delivery` row.
    init(_ row: Row) {
        id = row["id"]
        incident = row["incident"]
        role = row["role"]
        contactIndex = row["contact_index"]
    }
}

/// A delivery the worker is about to send.
struct DueDelivery: Sendable {
    var place: DeliveryPlace
    var delivery: Delivery
    var attempts: Int
    var deadline: Double
}

/// How one attempt ended.
enum AttemptResult: Sendable {
    case sent(DeliveryReceipt)
    case failed(DeliveryFailure)
}

// What the delivery worker asks of the outbox: due deliveries, results, escalation.
extension Outbox {
    /// Pending deliveries whose time has come, oldest first, leaving out `busy` ones. Armed
    /// deliveries count once their fallback time has come (the countdown's process is gone or stuck).
    /// A row that no longer decodes (written by another version, say) is quarantined, not retried:
    /// one bad row must not hold up every other alert.
    func due(excluding busy: Set<Int64>, limit: Int) async throws -> [DueDelivery] {
        let t = now()
        let (due, unreadable) = try await db.read { db -> ([DueDelivery], [(id: Int64, key: String, error: String)]) in
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, idempotency_key, delivery_json, attempts, deadline, role, contact_index, incident FROM delivery
                WHERE state IN ('pending', 'armed') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
                """, arguments: [t, limit + busy.count])
            var due: [DueDelivery] = [], unreadable: [(id: Int64, key: String, error: String)] = []
            for row in rows.filter({ !busy.contains($0["id"]) }).prefix(limit) {
                do {
                    due.append(DueDelivery(place: DeliveryPlace(row), delivery: try row.delivery(),
                                           attempts: row["attempts"], deadline: row["deadline"]))
                } catch {
                    unreadable.append((row["id"], row["idempotency_key"], "\(error)"))
                }
            }
            return (due, unreadable)
        }
        if !unreadable.isEmpty { try await quarantine(unreadable) }
        return due
    }

    /// Sets rows aside as `quarantined` (kept in the file for inspection, counted in the
    /// metrics, never sent), logging each once.
    private func quarantine(_ rows: [(id: Int64, key: String, error: String)]) async throws {
        let t = now()
        try await db.write { db in
            for row in rows {
                try db.execute(sql: """
                    UPDATE delivery SET state = 'quarantined', finished_at = ?, last_error = ? WHERE id = ?
                    """, arguments: [t, "cannot be read: \(row.error)", row.id])
            }
        }
        for row in rows {
            logger.critical("delivery \(row.key) cannot be read and is quarantined (kept in the outbox, not sent): \(row.error)")
        }
    }

    /// The earliest time something is due: a pending delivery not in `busy`, or an escalation.
    func nextDueTime(excluding busy: Set<Int64>) async throws -> Double? {
        try await db.read { db in
            let ids = busy.map(String.init).joined(separator: ",")
            let d = try Double.fetchOne(db, sql: """
                SELECT MIN(next_attempt_at) FROM delivery WHERE state IN ('pending', 'armed') AND id NOT IN (\(ids))
                """)
            let e = try Double.fetchOne(db, sql: "SELECT MIN(escalation_due) FROM incident WHERE escalation_due IS NOT NULL")
            return [d, e].compactMap { $0 }.min()
        }
    }

    /// Whether any delivery is still pending.
    func hasPending() async throws -> Bool {
        try await db.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM delivery WHERE state IN ('pending', 'armed'))") ?? false }
    }

    /// Stores the result of an attempt: sent; retried later with backoff; or failed (permanent,
    /// or past the deadline), which escalates when the responsible contact was not reached.
    /// `retryBy`: a transient failure is tried again no later than this (a fallback's moment).
    func record(_ result: AttemptResult, for d: DueDelivery, retryBy: Double? = nil) async throws {
        let t = now()
        let attempts = d.attempts + 1
        let meta: Logger.Metadata = ["key": "\(d.delivery.idempotencyKey)", "channel": "\(d.delivery.channel)", "attempt": "\(attempts)"]
        switch result {
        case .sent(let receipt):
            try await db.write { db in
                try db.execute(sql: """
                    UPDATE delivery SET state = 'sent', attempts = ?, last_attempt_at = ?, finished_at = ?, receipt = ?,
                        provider_id = ?
                    WHERE id = ?
                    """, arguments: [attempts, t, t, receipt.providerID.map { "\($0): \(receipt.detail)" } ?? receipt.detail,
                                     receipt.providerID, d.place.id])
            }
            logger.info("delivered", metadata: meta)
            let payload = d.delivery.payload
            if !payload.test {
                progressFeed.yield(.delivered(incident: d.place.incident, channel: d.delivery.channel,
                                             to: d.delivery.recipient?.name))
            }
        case .failed(.transient(let why)) where t < d.deadline:
            let wait = settings.policy.retry.delay(afterAttempts: attempts, random: Double.random(in: 0...1))
            let next = min(t + wait, d.deadline, max(retryBy ?? .infinity, t + 0.5))
            try await db.write { db in
                try db.execute(sql: """
                    UPDATE delivery SET attempts = ?, last_attempt_at = ?, next_attempt_at = ?, last_error = ? WHERE id = ?
                    """, arguments: [attempts, t, next, why, d.place.id])
            }
            logger.warning("will retry in \(String(format: "%.1f", next - t)) s: \(why)", metadata: meta)
        case .failed(let failure):
            let why = if case .transient = failure { "deadline passed; last attempt: \(failure)" } else { "\(failure)" }
            try await db.write { db in
                try db.execute(sql: """
                    UPDATE delivery SET state = 'failed', attempts = ?, last_attempt_at = ?, finished_at = ?, last_error = ?
                    WHERE id = ?
                    """, arguments: [attempts, t, t, why, d.place.id])
                try self.escalate(past: d.place, because: "delivery \(d.delivery.idempotencyKey) failed", in: db)
            }
            logger.error("delivery failed: \(why)", metadata: meta)
            if !d.delivery.payload.test {
                progressFeed.yield(.failed(incident: d.place.incident, channel: d.delivery.channel, to: d.delivery.recipient?.name, why: why))
            }
        }
    }

    /// Escalates every incident whose responsible contact did not acknowledge in time.
    func escalateOverdue() async throws {
        let t = now()
        let overdue = try await db.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incident WHERE escalation_due <= ?)", arguments: [t]) ?? false
        }
        guard overdue else { return }
        let escalated = try await db.write { db -> Int in
            let rows = try Row.fetchAll(db, sql: """
                SELECT incident, responsible FROM incident WHERE escalation_due IS NOT NULL AND escalation_due <= ?
                """, arguments: [t])
            for row in rows {
                do {
                    try self.escalate(row["incident"], from: row["responsible"], because: "no acknowledgement in time", in: db)
                } catch {
                    // An alert that no longer decodes cannot escalate; the others still must.
                    try db.execute(sql: "UPDATE incident SET escalation_due = NULL WHERE incident = ?", arguments: [row["incident"] as String])
                    self.logger.critical("cannot escalate (its alert cannot be read; escalation stopped): \(error)",
                                         metadata: ["incident": "\(row["incident"] as String)"])
                }
            }
            return rows.count
        }
        if escalated > 0 { wake.signal() }
    }

    /// Escalates past the contact of `place` when the delivery went to the responsible contact
    /// (role `primary`) and did not reach them; a delivery to another contact or a broadcast
    /// escalates nothing.
    func escalate(past place: DeliveryPlace, because why: String, in db: Database) throws {
        guard place.role == PlannedDelivery.Role.primary.rawValue, let index = place.contactIndex else { return }
        try escalate(place.incident, from: index, because: why, in: db)
    }

    /// Makes the contact after `index` responsible for `incident` and commits their deliveries,
    /// unless the incident was acknowledged, already moved on, or the list is at its end. The
    /// list is the one the incident began with (a reload meanwhile does not reorder it).
    func escalate(_ incident: String, from index: Int, because why: String, in db: Database) throws {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM incident WHERE incident = ?", arguments: [incident]),
              (row["acknowledged_at"] as Double?) == nil, (row["responsible"] as Int) == index,
              let alert = try StoredAlert.fetch(id: row["alert_id"], in: db) else { return }
        let contacts = (row["contacts_json"] as String?).flatMap { try? JSONDecoder().decode([Recipient].self, from: Data($0.utf8)) }
            ?? settings.contacts
        let next = index + 1
        let t = now()
        guard contacts.indices.contains(next) else {
            try db.execute(sql: "UPDATE incident SET escalation_due = NULL WHERE incident = ?", arguments: [incident])
            logger.critical("\(why); no further contact to escalate to", metadata: ["incident": "\(incident)"])
            return
        }
        let route = settings.policy.route(for: alert.alert.kind)
        for p in planner.escalation(alert.alert.kind, to: next, contacts: contacts) {
            _ = try insertDelivery(p, of: alert, deadline: t + route.deadline, in: db)
        }
        try db.execute(sql: "UPDATE incident SET responsible = ?, escalation_due = ? WHERE incident = ?",
                       arguments: [next, t + settings.policy.acknowledgeWithin, incident])
        logger.warning("\(why): escalating to \(contacts[next].name)", metadata: ["incident": "\(incident)"])
    }
}
