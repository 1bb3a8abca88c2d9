import FallGuardCore
import Foundation
import GRDB

/// A sent call whose end the follow-up waits for.
struct FollowedCall: Sendable, Equatable {
    var place: DeliveryPlace
    var channel: String
    var sid: String
    var contact: String
    var key: String
}

/// An alarm nobody has acknowledged yet, and when each contact was told of it.
struct OpenIncident: Sendable, Equatable {
    var incident: String
    /// The contact list it escalates along.
    var contacts: [Recipient]
    /// Unix time of the first delivery of this incident that reached each contact's phone (SMS
    /// or call), by phone number: a reply counts only after it.
    var toldAt: [String: Double]
}

// What the caregiver follow-up (call outcomes, SMS replies) asks of the outbox.
extension Outbox {
    /// Sent calls of `channels` from the last `window` seconds whose outcome is not known yet:
    /// with `modem`, those a modem made (provider id `modem:…`), else the others.
    func callsToFollow(channels: Set<String>, window: Double, modem: Bool = false) throws -> [FollowedCall] {
        guard !channels.isEmpty else { return [] }
        let since = now() - window
        return try db.read { db in
            let names = Array(channels)
            let marks = Array(repeating: "?", count: names.count).joined(separator: ",")
            return try Row.fetchAll(db, sql: """
                SELECT id, incident, channel, provider_id, role, contact_index, delivery_json, idempotency_key FROM delivery
                WHERE state = 'sent' AND outcome IS NULL AND provider_id IS NOT NULL AND finished_at >= ?
                    AND channel IN (\(marks)) AND provider_id \(modem ? "" : "NOT ")LIKE '\(ModemChannel.providerPrefix)%'
                ORDER BY id
                """, arguments: StatementArguments([since] + names.map { $0 as (any DatabaseValueConvertible) })).compactMap { row in
                let delivery = try? row.delivery()
                guard let delivery, !delivery.payload.test else { return nil }
                return FollowedCall(place: DeliveryPlace(row), channel: row["channel"], sid: row["provider_id"],
                                    contact: delivery.recipient?.name ?? "?", key: row["idempotency_key"])
            }
        }
    }

    /// Stores how `call` ended. A call to the responsible contact that reached nobody escalates
    /// to the next contact at once (unless the incident was acknowledged meanwhile).
    func record(_ outcome: CallOutcome, of call: FollowedCall) throws {
        let t = now()
        let text = switch outcome {
        case .reached: "reached"
        case let .notReached(why): "not-reached: \(why)"
        }
        try db.write { db in
            try db.execute(sql: "UPDATE delivery SET outcome = ?, outcome_at = ? WHERE id = ?", arguments: [text, t, call.place.id])
            if case let .notReached(why) = outcome {
                try self.escalate(past: call.place, because: "the call to \(call.contact) ended \(why)", in: db)
            }
        }
        switch outcome {
        case .reached:
            logger.notice("\(call.contact) answered the call", metadata: ["incident": "\(call.place.incident)", "key": "\(call.key)"])
            progressFeed.yield(.reached(incident: call.place.incident, channel: call.channel, contact: call.contact))
        case let .notReached(why):
            logger.warning("the call to \(call.contact) ended \(why): nobody reached", metadata: ["incident": "\(call.place.incident)", "key": "\(call.key)"])
            progressFeed.yield(.notReached(incident: call.place.incident, channel: call.channel, contact: call.contact, why: why))
            wake.signal()
        }
    }

    /// Alarms from the last `window` seconds that nobody acknowledged, with when each contact's
    /// phone was first told (by a sent delivery of this incident). Test alerts are not alarms.
    func openIncidents(window: Double) throws -> [OpenIncident] {
        let since = now() - window
        return try db.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT incident.incident, incident.contacts_json FROM incident JOIN alert ON alert.id = incident.alert_id
                WHERE incident.acknowledged_at IS NULL AND alert.created_at >= ? AND alert.test = 0
                """, arguments: [since])
            return try rows.map { row in
                let incident: String = row["incident"]
                let contacts = (row["contacts_json"] as String?).flatMap {
                    try? JSONDecoder().decode([Recipient].self, from: Data($0.utf8))
                } ?? settings.contacts
                var toldAt: [String: Double] = [:]
                for d in try Row.fetchAll(db, sql: """
                    SELECT delivery_json, finished_at FROM delivery WHERE incident = ? AND state = 'sent' ORDER BY finished_at
                    """, arguments: [incident]) {
                    guard let delivery = try? d.delivery(),
                          let phone = delivery.recipient?.phone, toldAt[phone] == nil else { continue }
                    toldAt[phone] = d["finished_at"]
                }
                return OpenIncident(incident: incident, contacts: contacts, toldAt: toldAt)
            }
        }
    }

    /// Keeps a reply read from the provider; false when it was read before (the list is read
    /// again on every poll and after a restart).
    func storeReply(sid: String, incident: String?, contact: String?, from: String, body: String, sentAt: Double,
                    meaning: String) throws -> Bool {
        let t = now()
        return try db.write { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO reply (sid, incident, contact, from_number, body, sent_at, meaning, read_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [sid, incident, contact, from, body, sentAt, meaning, t])
            return db.changesCount > 0
        }
    }

    /// The replies read for `incident`, oldest first: (contact, body, meaning).
    public func replies(incident: String) throws -> [(contact: String?, body: String, meaning: String)] {
        try db.read { db in
            try Row.fetchAll(db, sql: "SELECT contact, body, meaning FROM reply WHERE incident = ? ORDER BY sent_at, sid",
                             arguments: [incident]).map { ($0["contact"], $0["body"], $0["meaning"]) }
        }
    }
}
