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

    public init(httpClient: HTTPClient, logger: Logger = Logger(label: "fallguard.notify"),
                write: @escaping @Sendable (String) -> Void = { print($0) },
                acknowledgements: @escaping AcknowledgementHandler = { _, _ in }) {
        self.httpClient = httpClient
        self.logger = logger
        self.write = write
        self.acknowledgements = acknowledgements
    }
}

/// The settings of one channel type: the keys that sit beside `type:` in a `channels` entry.
/// Add a type by conforming to this protocol and listing it in the configuration module's
/// `ChannelTypes.all`.
public protocol ChannelOptions: ConfigSection {
    /// The value of `type:`, e.g. `twilio-sms`.
    static var type: String { get }
    /// Whom a delivery of this channel goes to.
    var addressing: ChannelAddressing { get }
    /// Builds the working channel named `name` (the key under `channels`).
    func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel
}

/// One named channel instance: `channels: { sms: { type: twilio-sms, account-sid: …, … } }`.
public struct ChannelSettings: ConfigSection {
    /// The types defined in this module. The configuration module lists every type of the
    /// build (these, MQTT and e-mail) and hands the list to the decoder under ``typesKey``.
    public static let builtIn: [any ChannelOptions.Type] = [
        TwilioSMSOptions.self, TwilioCallOptions.self, WebhookOptions.self, ExecOptions.self, ConsoleOptions.self,
    ]

    /// The decoder's `userInfo` key for the channel types a `type:` may name.
    public static let typesKey = CodingUserInfoKey(rawValue: "fallguard.channel-types")!

    /// The types `decoder` was given (``builtIn`` when it was given none).
    static func types(of decoder: any Decoder) -> [any ChannelOptions.Type] {
        decoder.userInfo[typesKey] as? [any ChannelOptions.Type] ?? builtIn
    }

    /// The `type:` key.
    public var type: String
    /// The decoded options; nil when ``type`` is not one of the types the decoder was given.
    public var options: (any ChannelOptions)?
    /// The types the decoder knew, for the message about an unknown one.
    private var known: [String] = []

    public init(_ options: any ChannelOptions) {
        self.type = Swift.type(of: options).type
        self.options = options
    }

    private enum CodingKeys: String, CodingKey { case type }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(String.self, forKey: .type)
        let types = Self.types(of: decoder)
        known = types.map { $0.type }
        options = try types.first { $0.type == type }?.init(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try options?.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
    }

    /// Whom this channel addresses (broadcast when the type is unknown).
    public var addressing: ChannelAddressing { options?.addressing ?? .broadcast }

    public func problems(at path: [String]) -> [ConfigProblem] {
        if let options { return options.problems(at: path) }
        return [ConfigProblem(path + ["type"], "unknown channel type '\(type)' (known: \(known.joined(separator: ", ")))")]
    }
}
