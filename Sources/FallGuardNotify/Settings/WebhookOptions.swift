/// An HTTP POST per alert, signed with HMAC-SHA256 when a secret is set. Works with Home
/// Assistant webhooks (``Body/json``) and ntfy topic URLs (``Body/text``).
public struct WebhookOptions: ChannelOptions, Equatable {
    /// What the POST carries.
    public enum Body: Sendable, Equatable, CaseIterable {
        /// The ``AlertPayload`` as JSON (`Content-Type: application/json`).
        case json
        /// The message text (`text/plain`), with the subject in a `Title` header (ntfy).
        case text
    }

    public var url: String
    /// The HMAC-SHA256 key for `X-FallGuard-Signature`; empty sends no signature.
    public var secret: String
    /// Extra request headers, e.g. `Authorization`, ntfy's `Priority`.
    public var headers: [String: String]
    public var body: Body
    /// Seconds for one request.
    public var timeout: Double
    public var addressing: ChannelAddressing { .broadcast }

    public init(url: String, secret: String = "", headers: [String: String] = [:], body: Body = .json, timeout: Double = 10) {
        (self.url, self.secret, self.headers, self.body, self.timeout) = (url, secret, headers, body, timeout)
    }

    /// The signing secret; the URL's password, last path segment (a Home Assistant webhook id,
    /// an ntfy topic: whoever knows it can post) and query values; credential headers' values.
    public var secrets: [String] {
        let credentialHeaders = headers.filter { name, _ in
            ["auth", "token", "key", "secret", "cookie"].contains { name.lowercased().contains($0) }
        }
        let values = credentialHeaders.values.flatMap { v in [v] + (v.split(separator: " ", maxSplits: 1).dropFirst().map(String.init)) }
        return [secret] + SecretRedactor.secrets(inURL: url, path: true) + values.sorted()
    }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(WebhookChannel(name: name, options: self, client: context.httpClient))
    }
}
