/// A caregiver's acknowledgement of an incident, as a channel received it.
public struct Acknowledgement: Sendable, Equatable {
    public var incident: String
    /// Who, as the channel names them (a contact's name, "Home Assistant").
    public var by: String

    public init(incident: String, by: String) { (self.incident, self.by) = (incident, by) }
}

/// Where every channel that receives acknowledgements (MQTT today) hands them on, created
/// before the channels so that none is built without it; the alarm takes them from
/// ``acknowledgements`` in arrival order. Holds the newest 64 while nobody reads.
public final class AcknowledgementInbox: Sendable {
    public let acknowledgements: AsyncStream<Acknowledgement>
    private let continuation: AsyncStream<Acknowledgement>.Continuation

    public init() {
        (acknowledgements, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// The handler a channel calls.
    public var handler: AcknowledgementHandler {
        { [continuation] incident, by in continuation.yield(Acknowledgement(incident: incident, by: by)) }
    }
}
