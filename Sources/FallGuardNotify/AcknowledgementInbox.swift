import FallGuardCore
import Foundation

/// A caregiver's acknowledgement of an incident, as a channel received it.
public struct Acknowledgement: Sendable, Equatable {
    public var incident: String
    /// Who, as the channel names them (a contact's name, "Home Assistant").
    public var by: String
    /// How, when the channel says (`SMS reply`): the incident log names it.
    public var via: String?
    /// A later step of a call a station accepted (nil: an acknowledgement): never one.
    public var step: CallStep?

    public init(incident: String, by: String, via: String? = nil, step: CallStep? = nil) {
        (self.incident, self.by, self.via, self.step) = (incident, by, via, step)
    }

    /// `Anna (SMS reply)`: who and how, as the alarm records and the follow-up messages show it.
    public var byAndVia: String { via.map { "\(by) (\($0))" } ?? by }
}

/// Where every channel that receives acknowledgements (MQTT today) hands them on, created
/// before the channels so that none is built without it; the alarm takes them from
/// ``acknowledgements`` in arrival order. Holds the newest 64 while nobody reads.
///
/// Who acknowledged reaches the contacts' "resolved" messages, so it is never the sender's own
/// text: a name that matches a configured contact (ignoring case) is shown as that contact's
/// name, anything else as ``otherwise``.
public final class AcknowledgementInbox: Sendable {
    public let acknowledgements: AsyncStream<Acknowledgement>
    private let continuation: AsyncStream<Acknowledgement>.Continuation
    private let contactNames: [String]
    /// What an acknowledgement whose sender names no contact is shown as.
    public static let otherwise = "Home Assistant"

    public init(contactNames: [String] = []) {
        self.contactNames = contactNames
        (acknowledgements, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// The handler a channel calls.
    public var handler: AcknowledgementHandler {
        { [continuation, contactNames] incident, by in
            continuation.yield(Acknowledgement(incident: incident, by: Self.shownName(by, contacts: contactNames)))
        }
    }

    /// The handler for acknowledgements that proved the bridge's secret (an MQTT HMAC: a staff
    /// station, a script that holds the secret): the sender's name is shown as given, a
    /// contact's name as the contact's, "via station".
    public var provenHandler: AcknowledgementHandler {
        { [continuation, contactNames] incident, by in
            continuation.yield(Acknowledgement(incident: incident, by: Self.provenName(by, contacts: contactNames), via: "station"))
        }
    }

    /// The handler for a station's later steps of a call (presence, reset), proven as
    /// ``provenHandler``'s acknowledgements are; named the same way.
    public var stepHandler: CallStepHandler {
        { [continuation, contactNames] incident, step, by in
            continuation.yield(Acknowledgement(incident: incident, by: Self.provenName(by, contacts: contactNames), via: "station", step: step))
        }
    }

    private static func provenName(_ by: String, contacts: [String]) -> String {
        let name = by.trimmingCharacters(in: .whitespaces)
        return contacts.first { $0.lowercased() == name.lowercased() } ?? (name.isEmpty ? otherwise : String(name.prefix(100)))
    }

    /// An acknowledgement from a contact the channel already identified (by phone number).
    public func receive(incident: String, contact: String, via: String) {
        continuation.yield(Acknowledgement(incident: incident, by: Self.shownName(contact, contacts: contactNames), via: via))
    }

    /// The configured contact `by` names, or ``otherwise``.
    static func shownName(_ by: String, contacts: [String]) -> String {
        let wanted = by.trimmingCharacters(in: .whitespaces).lowercased()
        return contacts.first { $0.lowercased() == wanted } ?? otherwise
    }
}
