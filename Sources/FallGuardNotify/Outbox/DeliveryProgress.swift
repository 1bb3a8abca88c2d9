/// What became of an alarm's messages after they left: what the wearer hears ("sent", "help is
/// coming") and the status shows. The outbox reports them on ``Outbox/progress``.
public enum DeliveryProgress: Sendable, Equatable {
    /// A delivery of an alert (not a test) was accepted by its provider or receiver.
    case delivered(incident: String, channel: String, to: String?)
    /// A delivery of an alert (not a test) failed for good: refused, or out of retries before
    /// its deadline. Escalation, where the policy has it, has begun.
    case failed(incident: String, channel: String, to: String?, why: String)
    /// A call was answered by a person.
    case reached(incident: String, channel: String, contact: String)
    /// A call ended without reaching a person (`no-answer`, `busy`, `failed`, `canceled`, a
    /// machine): the next contact is told at once.
    case notReached(incident: String, channel: String, contact: String, why: String)
    /// An SMS reply from a contact that did not acknowledge (kept with the incident).
    case reply(incident: String, contact: String, body: String)

    /// The incident the delivery belongs to.
    public var incident: String {
        switch self {
        case let .delivered(incident, _, _), let .failed(incident, _, _, _), let .reached(incident, _, _),
             let .notReached(incident, _, _, _), let .reply(incident, _, _):
            incident
        }
    }
}
