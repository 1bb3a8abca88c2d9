import FallGuardCore

/// `type: webhook`: an HTTP POST per alert, signed with HMAC-SHA256 when a secret is set.
/// Works with Home Assistant webhooks (`body: json`) and ntfy topic URLs (`body: text`).
public struct WebhookOptions: ChannelOptions, Equatable {
    public static let type = "webhook"

    /// What the POST carries.
    public enum Body: String, Sendable, Codable, Equatable {
        /// The ``AlertPayload`` as JSON (`Content-Type: application/json`).
        case json
        /// The message text (`text/plain`), with the subject in a `Title` header (ntfy).
        case text
    }

    /// Key `url`.
    public var url: String
    /// Key `secret`: the HMAC-SHA256 key for `X-FallGuard-Signature`; empty sends no signature.
    public var secret: String
    /// Key `headers`: extra request headers, e.g. `Authorization`, ntfy's `Priority`.
    public var headers: [String: String]
    /// Key `body`, default `json`.
    public var body: Body
    /// Key `timeout`: seconds for one request, default 10.
    public var timeout: Double
    public var addressing: ChannelAddressing { .broadcast }

    public init(url: String, secret: String = "", headers: [String: String] = [:], body: Body = .json, timeout: Double = 10) {
        self.url = url
        self.secret = secret
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    private enum CodingKeys: String, CodingKey { case url, secret, headers, body, timeout }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.value(.url, or: "")
        secret = try c.value(.secret, or: "")
        headers = try c.value(.headers, or: [:])
        body = try c.value(.body, or: .json)
        timeout = try c.value(.timeout, or: 10)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.httpURL(url, at: path + ["url"]) + ConfigCheck.seconds(timeout, in: 1...120, at: path + ["timeout"])
        for name in headers.keys.sorted() where !Self.isToken(name) {
            found.append(ConfigProblem(path + ["headers", name], "'\(name)' is not a valid HTTP header name"))
        }
        return found
    }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        WebhookChannel(name: name, options: self, client: context.httpClient)
    }

    private static func isToken(_ s: String) -> Bool {
        !s.isEmpty && s.unicodeScalars.allSatisfy { c in
            c.isASCII && c.value > 32 && c.value < 127 && !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains(c)
        }
    }
}
