import AsyncHTTPClient
import FallGuardCore
import Logging

/// What a channel needs to know about a contact to reach them.
public enum ChannelAddressing: Sendable, Equatable {
    /// Sends to the contact's E.164 phone number (SMS, voice call).
    case phone
    /// Sends to the contact's e-mail address.
    case email
    /// Has no recipient: one message per alert (webhook, MQTT, exec, console).
    case broadcast
}

/// What channels share when they are built: one HTTP client, a logger, where the console writes.
public struct ChannelContext: Sendable {
    public var httpClient: HTTPClient
    public var logger: Logger
    /// Where the console channel writes a line.
    public var write: @Sendable (String) -> Void
    /// Where channels that receive acknowledgements (MQTT) hand them on.
    public var acknowledgements: AcknowledgementHandler
    /// Where acknowledgements that proved the bridge's secret go (``AcknowledgementInbox/provenHandler``);
    /// nil: with the others.
    public var provenAcknowledgements: AcknowledgementHandler?
    /// Where a station's later steps of a call go (``AcknowledgementInbox/stepHandler``); nil: refused.
    public var callSteps: CallStepHandler?
    /// Whether the wall clock is synchronised (nil: not known); an acknowledgement's signed time
    /// is only held to a clock that is (``clockSynchronized`` of the daemon: adjtimex).
    public var clockSynchronized: @Sendable () -> Bool?

    public init(httpClient: HTTPClient, logger: Logger = Logger(label: "fallguard.notify"),
                write: @escaping @Sendable (String) -> Void = { print($0) },
                acknowledgements: @escaping AcknowledgementHandler = { _, _ in },
                provenAcknowledgements: AcknowledgementHandler? = nil,
                callSteps: CallStepHandler? = nil,
                clockSynchronized: @escaping @Sendable () -> Bool? = { nil }) {
        self.httpClient = httpClient
        self.logger = logger
        self.write = write
        self.acknowledgements = acknowledgements
        self.provenAcknowledgements = provenAcknowledgements
        self.callSteps = callSteps
        self.clockSynchronized = clockSynchronized
    }
}

/// The options of one channel type (`TwilioSMSOptions`, `WebhookOptions`, …): what a channel
/// needs to be built. The configuration module reads them from the file and lists the types.
public protocol ChannelOptions: Sendable {
    /// Whom a delivery of this channel goes to.
    var addressing: ChannelAddressing { get }
    /// Builds the working channel named `name` (the key under `channels`).
    func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel
    /// Whether `other` is the same type with the same options (a reload compares them).
    func isSame(as other: any ChannelOptions) -> Bool
    /// The values of these options that must never leave the process in a text (tokens,
    /// passwords, webhook ids): the channel's receipts and failures are redacted of them.
    var secrets: [String] { get }
}

extension ChannelOptions {
    public var secrets: [String] { [] }

    /// `channel` with its receipts and failures passed through a redactor of ``secrets``, as
    /// every channel whose texts may quote a URL, a server's reply or a command's output is made.
    public func redacting(_ channel: any NotificationChannel) -> any NotificationChannel {
        RedactingChannel(channel, redactor: SecretRedactor(secrets: secrets))
    }
}

extension ChannelOptions where Self: Equatable {
    public func isSame(as other: any ChannelOptions) -> Bool { (other as? Self) == self }
}

extension [String: any ChannelOptions] {
    /// The same names with the same options.
    public func isSame(as other: [String: any ChannelOptions]) -> Bool {
        count == other.count && allSatisfy { name, options in other[name].map(options.isSame(as:)) ?? false }
    }
}
