import Atomics
import Dispatch
import FallGuardNotify
import Foundation
import Logging

/// Sends each delivery as a plain-text e-mail to its recipient's address over SMTP (libcurl):
/// STARTTLS or implicit TLS, optional authentication. ``send(_:)`` runs the blocking transfer
/// on the channel's own serial queue, never on the cooperative pool, and never retries.
public final class EmailChannel: NotificationChannel {
    public let name: String
    public let settings: EmailChannelSettings
    private let queue: DispatchQueue
    private let logger: Logger

    public init(name: String = "email", settings: EmailChannelSettings, logger: Logger = Logger(label: "fallguard.email")) {
        self.name = name
        self.settings = settings
        self.queue = DispatchQueue(label: "fallguard.email.\(name)")
        self.logger = logger
        if case .failure(let problem) = libcurl {
            logger.critical("e-mail channel \(name): libcurl cannot be loaded (\(problem)); its messages wait in the outbox until it can: install libcurl4 and restart")
        }
    }

    /// The message a delivery becomes: subject and body from the rendered message, the
    /// idempotency key in a header and the Message-ID.
    public func message(for delivery: Delivery, to address: String, date: Date = Date()) -> EmailMessage {
        let p = delivery.payload
        var extra: [(name: String, value: String)] = [
            ("Incident", p.alert.incident), ("Severity", p.alert.severity.rawValue), ("Device", p.device),
        ]
        if p.test { extra.append(("Test", "yes")) }
        return EmailMessage(from: settings.from, fromName: settings.fromName, to: address,
                            toName: delivery.recipient?.name, subject: p.message.subject, body: p.message.body,
                            idempotencyKey: p.idempotencyKey, extraHeaders: extra, date: date)
    }

    /// Sends one e-mail. Throws ``DeliveryFailure``: permanent when the recipient has no valid
    /// address or the server refused for good (5xx, bad credentials, TLS refused), transient for
    /// network problems, timeouts and 4xx replies.
    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        guard let address = delivery.recipient?.email else {
            throw DeliveryFailure.permanent("\(delivery.recipient?.name ?? "the recipient") has no e-mail address")
        }
        guard EmailAddress.isValid(address) else {
            throw DeliveryFailure.permanent("'\(address)' is not an e-mail address")
        }
        let message = message(for: delivery, to: address)
        let transfer = SMTPTransfer(settings: settings, recipient: address, message: message.bytes,
                                    cancelled: ManagedAtomic(false))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { c in queue.async { c.resume(returning: transfer.perform()) } }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
        }
        switch result {
        case .success(let reply):
            return DeliveryReceipt(providerID: message.messageID, detail: "accepted by \(settings.url) (\(reply))")
        case .failure(let failure):
            logger.warning("e-mail to \(address) failed: \(failure)")
            throw failure
        }
    }
}
