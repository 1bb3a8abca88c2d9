import AsyncHTTPClient
import FallGuardCore
import Foundation
import NIOCore

/// `type: ntfy`: a push message to an ntfy topic (ntfy.sh or a server of your own): no account,
/// the phone's ntfy app subscribed to the topic. The topic is the secret (whoever knows it can
/// read and post); `token` adds an access token for a protected topic.
public struct NtfyOptions: ChannelOptions, Equatable {
    /// The server's base URL.
    public var server: String
    /// The topic: letters, digits, `-` and `_`, at most 64.
    public var topic: String
    /// An access token (`Authorization: Bearer`); empty: none.
    public var token: String
    /// Seconds for one request.
    public var timeout: Double
    public var addressing: ChannelAddressing { .broadcast }

    public init(server: String = "https://ntfy.sh", topic: String, token: String = "", timeout: Double = 10) {
        (self.server, self.topic, self.token, self.timeout) = (server, topic, token, timeout)
    }

    /// The topic's URL.
    public var url: String { (server.hasSuffix("/") ? String(server.dropLast()) : server) + "/" + topic }

    /// The topic and the token: a topic is a password in ntfy.
    public var secrets: [String] { [topic, token].filter { !$0.isEmpty } }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        redacting(NtfyChannel(name: name, options: self, client: context.httpClient))
    }
}

/// One POST of the message text to the topic (ntfy's HTTP API), its subject as `Title` and
/// ntfy's `Priority` and `Tags` by the alert's severity. Made by ``NtfyOptions/makeChannel(named:context:)``.
public struct NtfyChannel: NotificationChannel {
    public let name: String
    let options: NtfyOptions
    let client: HTTPClient

    /// ntfy's priority and tags (emoji) for an alert of `severity`: an alarm is urgent (the
    /// app breaks through do-not-disturb), a device problem high, the rest default; a test
    /// alert says so.
    public static func headers(for severity: AlertSeverity, test: Bool) -> (priority: String, tags: String) {
        if test { return ("default", "test_tube") }
        switch severity {
        case .alarm: return ("urgent", "rotating_light")
        case .warning: return ("high", "warning")
        case .information: return ("default", "information_source")
        }
    }

    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        let payload = delivery.payload
        var request = HTTPClientRequest(url: options.url)
        request.method = .POST
        let (priority, tags) = Self.headers(for: payload.alert.kind.severity, test: payload.test)
        request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        request.headers.add(name: "Title", value: payload.message.subject)
        request.headers.add(name: "Priority", value: priority)
        request.headers.add(name: "Tags", value: tags)
        if !options.token.isEmpty { request.headers.add(name: "Authorization", value: "Bearer \(options.token)") }
        request.body = .bytes(ByteBuffer(bytes: Data(payload.message.body.utf8)))
        let answer = try await HTTPDelivery.send(request, client: client, timeout: options.timeout)
        try HTTPDelivery.check(answer, url: options.url)
        return DeliveryReceipt(detail: "\(options.url) answered HTTP \(answer.status.code)")
    }
}
