import FallGuardCore

// The contract between the durable outbox and the channels (SMS, call, webhook, MQTT, e-mail,
// exec, console). The outbox stores ``Delivery`` rows before anything is sent; a worker hands
// each one to its channel's ``NotificationChannel/send(_:)`` and retries transient failures.

/// The person an individual message goes to. Broadcast channels (webhook, MQTT, exec) have none.
public struct Recipient: Sendable, Codable, Equatable, Hashable {
    public var name: String
    /// E.164, e.g. `+447700900123`.
    public var phone: String?
    public var email: String?

    public init(name: String, phone: String? = nil, email: String? = nil) {
        (self.name, self.phone, self.email) = (name, phone, email)
    }
}

/// The text of one message, rendered from the templates (wearer's name, time, incident id,
/// detector reason, location text).
public struct RenderedMessage: Sendable, Codable, Equatable {
    /// One line: an e-mail subject, a notification title.
    public var subject: String
    /// The full text: an SMS body, what a call speaks, an e-mail body.
    public var body: String

    public init(subject: String, body: String) { (self.subject, self.body) = (subject, body) }
}

/// Who is being watched over, as the messages name them.
public struct Wearer: Sendable, Codable, Equatable {
    public var name: String
    /// Free text, e.g. "Flat 3, 12 Mill Lane; key safe code 1234".
    public var location: String
    /// The channels whose messages and payloads carry ``location`` (nil: the channels that
    /// send to a contact, SMS, call and e-mail). Every other channel gets it withheld: an MQTT
    /// broker, a webhook or a command is read by more than the people who must find the door.
    public var locationChannels: [String]?

    public init(name: String, location: String = "", locationChannels: [String]? = nil) {
        (self.name, self.location, self.locationChannels) = (name, location, locationChannels)
    }

    /// What a channel shows where the location is withheld.
    public static let withheldLocation = "(sent to the contacts only)"

    private enum CodingKeys: String, CodingKey { case name, location }

    /// A payload without `location` reads as an empty one.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        location = try c.decodeIfPresent(String.self, forKey: .location) ?? ""
    }
}

extension AlertPayload {
    /// This payload with the wearer's location replaced by ``Wearer/withheldLocation``, in the
    /// JSON field and in the message (where the SMS fitting may have shortened it to a prefix
    /// and `~`).
    public func withholdingLocation() -> AlertPayload {
        let location = wearer.location
        guard !location.isEmpty else { return self }
        var copy = self
        copy.wearer.location = ""
        func withhold(_ text: String) -> String {
            if text.contains(location) { return text.replacingOccurrences(of: location, with: Wearer.withheldLocation) }
            for length in stride(from: location.count - 1, through: 10, by: -1) {
                let cut = String(location.prefix(length)) + "~"
                if text.contains(cut) { return text.replacingOccurrences(of: cut, with: Wearer.withheldLocation) }
            }
            return text
        }
        copy.message.body = withhold(message.body)
        copy.message.subject = withhold(message.subject)
        return copy
    }
}

/// The machine-readable form of a delivery: the JSON body of a webhook, an MQTT alert payload
/// and what an `exec` command reads on standard input.
public struct AlertPayload: Sendable, Codable, Equatable {
    /// The same for every retry of this delivery, across crashes: receivers drop duplicates by it.
    public var idempotencyKey: String
    /// True for `fallguard test-alert`: nobody needs help.
    public var test: Bool
    public var device: String
    public var wearer: Wearer
    public var alert: Alert
    public var message: RenderedMessage
    /// Wall-clock time of the alert, ISO 8601 with offset.
    public var sentAt: String

    public init(idempotencyKey: String, test: Bool, device: String, wearer: Wearer, alert: Alert,
                message: RenderedMessage, sentAt: String) {
        self.idempotencyKey = idempotencyKey
        self.test = test
        self.device = device
        self.wearer = wearer
        self.alert = alert
        self.message = message
        self.sentAt = sentAt
    }
}

/// One message for one channel and at most one recipient.
public struct Delivery: Sendable, Codable, Equatable {
    /// The configured channel's name (a key of the `channels` section), e.g. `sms`, `call`.
    public var channel: String
    public var recipient: Recipient?
    public var payload: AlertPayload

    public init(channel: String, recipient: Recipient?, payload: AlertPayload) {
        (self.channel, self.recipient, self.payload) = (channel, recipient, payload)
    }

    public var idempotencyKey: String { payload.idempotencyKey }
}

/// What a provider answered for a delivery that went out.
public struct DeliveryReceipt: Sendable, Codable, Equatable {
    /// The provider's id (Twilio's message SID, the MQTT message id, …), when it gives one.
    public var providerID: String?
    public var detail: String

    public init(providerID: String? = nil, detail: String) { (self.providerID, self.detail) = (providerID, detail) }
}

/// Why a delivery did not go out. Transient failures are retried with backoff until the
/// delivery's deadline; permanent ones fail it at once (and escalate).
public enum DeliveryFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Network down, timeout, HTTP 5xx or 429, broker unreachable: try again later.
    case transient(String)
    /// Rejected for good: HTTP 4xx other than 408/429, bad credentials, invalid number.
    case permanent(String)

    public var description: String {
        switch self {
        case .transient(let why): "temporary failure: \(why)"
        case .permanent(let why): "permanent failure: \(why)"
        }
    }
}

/// A way to tell people. Implementations must be safe to call concurrently and must not
/// retry on their own: the outbox owns retries, backoff and deadlines.
public protocol NotificationChannel: Sendable {
    /// The configured name, as in ``Delivery/channel``.
    var name: String { get }
    /// Sends one delivery. Throws ``DeliveryFailure`` (anything else counts as transient).
    func send(_ delivery: Delivery) async throws -> DeliveryReceipt
}

/// Where remote acknowledgements (MQTT, a webhook reply, an HTTP endpoint) are handed to the
/// alert engine: `AlertInput.acknowledged(incidentID:by:)`.
public typealias AcknowledgementHandler = @Sendable (_ incident: String, _ by: String) -> Void

/// Where a staff station's later step of a call it accepted (presence, reset), proven as its
/// acknowledgement was, is handed to the alert engine: `AlertInput.stationStep(incidentID:step:by:)`.
public typealias CallStepHandler = @Sendable (_ incident: String, _ step: CallStep, _ by: String) -> Void
