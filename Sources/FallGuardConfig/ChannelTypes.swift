import FallGuardConfigKeys
import FallGuardCore
import FallGuardEmail
import FallGuardMQTT
import FallGuardNotify
import Foundation

// Every channel type a `channels` entry may name (`type: twilio-sms`, `type: mqtt`, …). The types
// are listed here; there is no registry. Each type's keys, defaults and checks are declared
// beside its options, in the channel's own module (Notify, MQTT, Email).

/// The options of a channel type, read from the keys beside `type:`.
public typealias ChannelSection = ChannelOptions & ConfigSection

public enum ChannelTypes {
    /// Every channel type of this build by its `type:` word, in the order `check-config` lists them.
    public static let all: [(type: String, options: any ChannelSection.Type)] = [
        ("twilio-sms", TwilioSMSOptions.self), ("twilio-call", TwilioCallOptions.self), ("webhook", WebhookOptions.self),
        ("exec", ExecOptions.self), ("console", ConsoleOptions.self), ("mqtt", MQTTChannelSettings.self),
        ("email", EmailChannelSettings.self), ("modem", ModemOptions.self), ("ntfy", NtfyOptions.self),
    ]

    /// The `type:` word of `options`.
    public static func type(of options: any ChannelOptions) -> String? {
        all.first { ObjectIdentifier($0.options) == ObjectIdentifier(Swift.type(of: options)) }?.type
    }
}

/// The `type:` words.
extension ChannelTypes: WordList {
    package static var words: [(word: String, value: any ChannelSection.Type)] { all.map { ($0.type, $0.options) } }
}

/// One entry of `channels`: `{type: twilio-sms, account-sid: …, …}`.
struct ChannelEntry: ConfigSection {
    var options: any ChannelOptions

    init(_ options: any ChannelOptions) { self.options = options }

    fileprivate enum CodingKeys: String, CodingKey { case type }

    init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        if let known = ChannelTypes.value(named: type) {
            options = try known.init(fromConfig: decoder)
        } else {
            options = UnknownChannel(type: type)
        }
    }

    func encodeConfig(to encoder: any Encoder) throws {
        if let options = options as? any ConfigSection { try options.encodeConfig(to: encoder) }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ChannelTypes.type(of: options) ?? (options as? UnknownChannel)?.type ?? "", forKey: .type)
    }

    func problems(at path: [String]) -> [ConfigProblem] {
        (options as? any ConfigSection)?.problems(at: path) ?? []
    }
}

/// An entry whose `type:` names no channel type: kept so that it is reported once (and not
/// again as an unknown channel wherever the policy names it). The configuration does not load.
struct UnknownChannel: ChannelOptions, ConfigSection, Equatable {
    var type: String
    var addressing: ChannelAddressing { .broadcast }

    init(type: String) { self.type = type }
    init(fromConfig decoder: any Decoder) throws { type = "" }
    func encodeConfig(to encoder: any Encoder) throws {}

    func problems(at path: [String]) -> [ConfigProblem] {
        [ConfigProblem(path + [ChannelEntry.CodingKeys.type.stringValue], ChannelTypes.mismatch(type))]
    }

    func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        throw ConfigProblem(NotificationSettings.at([], \.channels) + [name, ChannelEntry.CodingKeys.type.stringValue], "unknown channel type '\(type)'")
    }
}
