/// A channel whose texts are redacted before they leave it: the receipt's id and detail, and
/// a failure's reason, which the outbox stores and `test-alert` prints. Cancellation passes as is.
struct RedactingChannel: NotificationChannel {
    let base: any NotificationChannel
    let redactor: SecretRedactor

    init(_ base: any NotificationChannel, redactor: SecretRedactor) { (self.base, self.redactor) = (base, redactor) }

    var name: String { base.name }

    func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        do {
            let receipt = try await base.send(delivery)
            return DeliveryReceipt(providerID: receipt.providerID.map(redactor.redact), detail: redactor.redact(receipt.detail))
        } catch let failure as DeliveryFailure {
            switch failure {
            case .transient(let why): throw DeliveryFailure.transient(redactor.redact(why))
            case .permanent(let why): throw DeliveryFailure.permanent(redactor.redact(why))
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw DeliveryFailure.transient(redactor.redact("\(error)"))   // anything else counts as transient
        }
    }
}
