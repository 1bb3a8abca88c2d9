import AsyncHTTPClient
import Foundation
import NIOCore

/// SMS and voice calls through a Twilio-compatible REST API:
/// `POST {base}/2010-04-01/Accounts/{sid}/Messages.json` (To, From, Body) and `Calls.json`
/// (To, From, Twiml that speaks the message with `<Say>`, repeated), with basic auth.
public struct TwilioChannel: NotificationChannel {
    public enum Mode: Sendable, Equatable {
        case sms
        case call(repeatCount: Int, language: String, machineDetection: Bool)
    }

    public let name: String
    let account: TwilioAccount
    let mode: Mode
    let client: HTTPClient

    public init(name: String, account: TwilioAccount, mode: Mode, client: HTTPClient) {
        (self.name, self.account, self.mode, self.client) = (name, account, mode, client)
    }

    /// The resource URL for this mode.
    var url: String { account.url(mode == .sms ? "Messages.json" : "Calls.json") }

    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        guard let to = delivery.recipient?.phone else {
            throw DeliveryFailure.permanent("\(name): the recipient has no phone number")
        }
        var fields = [("To", to), ("From", account.from)]
        switch mode {
        case .sms: fields.append(("Body", delivery.payload.message.body))
        case let .call(repeatCount, language, machineDetection):
            fields.append(("Twiml", Self.twiml(speaking: delivery.payload.message.body, times: repeatCount, language: language)))
            // A voicemail must not count as a person reached (the follow-up reads AnsweredBy).
            if machineDetection { fields.append(("MachineDetection", "Enable")) }
        }
        var request = account.request(url, method: .POST)
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        // Twilio itself ignores it; compatible providers and proxies may drop duplicates by it.
        request.headers.add(name: "I-Twilio-Idempotency-Token", value: delivery.idempotencyKey)
        request.body = .bytes(ByteBuffer(string: HTTPDelivery.formEncoded(fields)))
        let answer = try await HTTPDelivery.send(request, client: client, timeout: account.timeout)
        try HTTPDelivery.check(answer, url: url)
        let sid = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["sid"] as? String
        return DeliveryReceipt(providerID: sid, detail: "\(mode == .sms ? "SMS" : "call") to \(to) accepted (HTTP \(answer.status.code))")
    }

    /// `<Response><Say>…</Say><Pause/>…</Response>`: the message `times` times.
    public static func twiml(speaking text: String, times: Int, language: String) -> String {
        let say = "<Say language=\"\(xmlEscaped(language))\">\(xmlEscaped(text))</Say>"
        let parts = Array(repeating: say, count: max(1, times)).joined(separator: "<Pause length=\"1\"/>")
        return "<Response>\(parts)</Response>"
    }

    static func xmlEscaped(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }
}
