import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore

/// A JSON (or text) POST per delivery, signed `X-FallGuard-Signature: sha256=<hex HMAC-SHA256
/// of the body>` when a secret is set, with `Idempotency-Key` and the configured headers.
public struct WebhookChannel: NotificationChannel {
    public let name: String
    let options: WebhookOptions
    let client: HTTPClient

    public init(name: String, options: WebhookOptions, client: HTTPClient) {
        (self.name, self.options, self.client) = (name, options, client)
    }

    /// The payload as the webhook sends it: JSON with sorted keys.
    public static func jsonBody(_ payload: AlertPayload) throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return try e.encode(payload)
    }

    /// `sha256=` and the lowercase hex HMAC-SHA256 of `body` under `secret`.
    public static func signature(of body: Data, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + mac.lowercaseHex
    }

    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        let payload = delivery.payload
        let body: Data
        var request = HTTPClientRequest(url: options.url)
        request.method = .POST
        switch options.body {
        case .json:
            body = try Self.jsonBody(payload)
            request.headers.add(name: "Content-Type", value: "application/json")
        case .text:
            body = Data(payload.message.body.utf8)
            request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            request.headers.add(name: "Title", value: payload.message.subject)
        }
        request.headers.add(name: "Idempotency-Key", value: delivery.idempotencyKey)
        if !options.secret.isEmpty {
            request.headers.add(name: "X-FallGuard-Signature", value: Self.signature(of: body, secret: options.secret))
        }
        for (header, value) in options.headers.sorted(by: { $0.key < $1.key }) {
            request.headers.replaceOrAdd(name: header, value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: body))
        let answer = try await HTTPDelivery.send(request, client: client, timeout: options.timeout)
        try HTTPDelivery.check(answer, url: options.url)
        return DeliveryReceipt(detail: "\(options.url) answered HTTP \(answer.status.code)")
    }
}
