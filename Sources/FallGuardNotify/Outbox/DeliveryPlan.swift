import FallGuardCore

/// Who gets a delivery and why: the pure part of the outbox, from the policy and the contacts.
public struct PlannedDelivery: Sendable, Equatable {
    /// Why this delivery exists.
    public enum Role: String, Sendable, Equatable {
        /// To the contact responsible for the incident (escalation moves it down the list).
        case primary
        /// To another contact, at once.
        case other
        /// To a channel without a recipient.
        case broadcast
    }

    public var channel: String
    public var role: Role
    /// The contact's index in `contacts`, nil for broadcast.
    public var contactIndex: Int?
    public var recipient: Recipient?

    /// The last part of the idempotency key: `p0.sms`, `o2.sms`, `b.webhook`.
    var keySuffix: String {
        let who = switch role {
        case .primary: "p\(contactIndex ?? 0)"
        case .other: "o\(contactIndex ?? 0)"
        case .broadcast: "b"
        }
        return "\(who).\(channel)"
    }
}

/// Plans deliveries from ``NotificationSettings``.
public struct DeliveryPlanner: Sendable {
    public var settings: NotificationSettings

    public init(settings: NotificationSettings) { self.settings = settings }

    /// Every delivery for a new alert: the route's primary channels to the first contact, its
    /// other channels to every other contact, its broadcast channels once.
    public func plan(_ kind: AlertKind) -> (deliveries: [PlannedDelivery], skipped: [String]) {
        let route = settings.policy.route(for: kind)
        var planned: [PlannedDelivery] = []
        var skipped: [String] = []
        for (i, contact) in settings.contacts.enumerated() {
            for name in i == 0 ? route.primary : route.others {
                let role: PlannedDelivery.Role = i == 0 ? .primary : .other
                if let p = delivery(name, role, i, contact) { planned.append(p) } else { skipped.append("\(name) to \(contact.name)") }
            }
        }
        planned += route.broadcast.map { PlannedDelivery(channel: $0, role: .broadcast, contactIndex: nil, recipient: nil) }
        return (planned, skipped)
    }

    /// The deliveries that make contact `index` of `contacts` (default: the configured list)
    /// responsible: the route's primary channels.
    public func escalation(_ kind: AlertKind, to index: Int, contacts: [Recipient]? = nil) -> [PlannedDelivery] {
        let contacts = contacts ?? settings.contacts
        guard contacts.indices.contains(index) else { return [] }
        return settings.policy.route(for: kind).primary.compactMap {
            delivery($0, .primary, index, contacts[index])
        }
    }

    /// Nil when the contact lacks the address the channel needs (configuration checks report it).
    private func delivery(_ name: String, _ role: PlannedDelivery.Role, _ index: Int, _ contact: Recipient) -> PlannedDelivery? {
        switch settings.channels[name]?.addressing {
        case .phone where contact.phone == nil, .email where contact.email == nil: return nil
        default: return PlannedDelivery(channel: name, role: role, contactIndex: index, recipient: contact)
        }
    }
}
