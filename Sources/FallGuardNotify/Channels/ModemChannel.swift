/// SMS and voice calls through ModemManager (``ModemManager``, `mmcli`): the same texts as
/// Twilio's (rendered and shortened the same way; ModemManager splits a long one into the parts
/// of a concatenated SMS). A call's receipt carries the call's path with a `modem:` prefix, by
/// which ``CaregiverFollowUp`` follows it to its end (answered, no answer, busy) and escalates
/// as it does a Twilio call.
public struct ModemChannel: NotificationChannel {
    public let name: String
    let options: ModemOptions

    /// The prefix of a modem's provider id in the outbox.
    static let providerPrefix = "modem:"

    public init(name: String, options: ModemOptions) { (self.name, self.options) = (name, options) }

    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        guard let to = delivery.recipient?.phone else {
            throw DeliveryFailure.permanent("\(name): the recipient has no phone number")
        }
        let manager = options.manager
        do {
            do {
                return try await deliver(delivery, to: to, by: manager)
            } catch let error as ModemManager.Unavailable {
                // Why, read from the modem only now (no SIM, locked, no network, ModemManager not
                // running: the attempt waits for it rather than failing for good, as a network
                // down does): a look before each send cost an alert two `mmcli` runs.
                let status = try await manager.status()
                if let problem = status.problem { throw DeliveryFailure.transient("\(name): \(problem)") }
                // It can send now (enabled at this look, found again at a new path): once more,
                // unless the SMS or call may have gone out.
                if error.afterSend { throw error }
                return try await deliver(delivery, to: to, by: manager)
            }
        } catch let failure as DeliveryFailure {
            throw failure
        } catch {
            throw DeliveryFailure.transient("\(name): \(error)")
        }
    }

    private func deliver(_ delivery: Delivery, to: String, by manager: ModemManager) async throws -> DeliveryReceipt {
        switch options.mode {
        case .sms:
            let sms = try await manager.sendSMS(delivery.payload.message.body, to: to)
            return DeliveryReceipt(providerID: Self.providerPrefix + sms, detail: "SMS to \(to) sent by the modem")
        case .call:
            let call = try await manager.startCall(to: to)
            return DeliveryReceipt(providerID: Self.providerPrefix + call, detail: "call to \(to) dialled by the modem")
        }
    }
}
