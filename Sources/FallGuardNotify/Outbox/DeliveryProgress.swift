/// What became of an alarm's messages after they left: what the wearer hears ("sent", "help is
/// coming") and the status shows. The outbox reports them on ``Outbox/progress``.
public enum DeliveryProgress: Sendable, Equatable {
    /// A delivery of the alarm (fall or help request) was accepted by its provider or receiver.
    case delivered(incident: String, channel: String, to: String?)
    /// A call was answered by a person.
    case reached(incident: String, channel: String, contact: String)
    /// A call ended without reaching a person (`no-answer`, `busy`, `failed`, `canceled`, a
    /// machine): the next contact is told at once.
    case notReached(incident: String, channel: String, contact: String, why: String)
    /// An SMS reply from a contact that did not acknowledge (kept with the incident).
    case reply(incident: String, contact: String, body: String)
}
