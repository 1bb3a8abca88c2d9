import FallGuardCore
import Foundation

/// The deliveries of `fallguard test-alert`: a fall alert marked TEST, for each channel once
/// per addressed contact (the primary one, or all) or once for broadcast channels.
public struct TestAlert: Sendable {
    public var settings: NotificationSettings
    public var allContacts: Bool

    public init(settings: NotificationSettings, allContacts: Bool = false) {
        (self.settings, self.allContacts) = (settings, allContacts)
    }

    /// One delivery per channel in `channels` and recipient, each with its own idempotency key.
    public func deliveries(for channels: [String], at date: Date = Date()) -> [Delivery] {
        let uid = String(UUID().uuidString.prefix(8)).lowercased()
        let alert = Alert(kind: .fall, incident: "TEST-\(uid)", time: 0)
        let renderer = MessageRenderer(templates: settings.templates, wearer: settings.wearer, device: settings.device)
        let message = renderer.render(alert, at: date, test: true)
        let contacts = allContacts ? settings.contacts : Array(settings.contacts.prefix(1))
        return channels.flatMap { name -> [Delivery] in
            let addressing = settings.channels[name]?.addressing ?? .broadcast
            let recipients: [Recipient?] = addressing == .broadcast ? [nil] : contacts.filter {
                addressing == .phone ? $0.phone != nil : $0.email != nil
            }
            return recipients.enumerated().map { i, r in
                Delivery(channel: name, recipient: r, payload: settings.payload(AlertPayload(
                    idempotencyKey: "\(alert.incident).test.\(name).\(i)", test: true, device: settings.device,
                    wearer: settings.wearer, alert: alert, message: message, sentAt: renderer.isoTime(date)), for: name))
            }
        }
    }
}
