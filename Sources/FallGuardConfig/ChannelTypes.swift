import FallGuardEmail
import FallGuardMQTT
import FallGuardNotify

// Every channel type a `channels` entry may name (`type: twilio-sms`, `type: mqtt`, …): the
// configuration module lists them and hands the list to the decoder; there is no registry.

extension MQTTChannelSettings: ChannelOptions {
    public static let type = "mqtt"
    public var addressing: ChannelAddressing { .broadcast }
    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        try MQTTChannel(name: name, settings: self, onAcknowledgement: context.acknowledgements, logger: context.logger)
    }
}

extension EmailChannelSettings: ChannelOptions {
    public static let type = "email"
    public var addressing: ChannelAddressing { .email }
    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        EmailChannel(name: name, settings: self, logger: context.logger)
    }
}

public enum ChannelTypes {
    /// Every channel type of this build, in the order `check-config` lists them.
    public static let all: [any ChannelOptions.Type] =
        ChannelSettings.builtIn + [MQTTChannelSettings.self, EmailChannelSettings.self]

    /// The decoder's `userInfo` that makes ``all`` known to ``ChannelSettings``.
    public static var userInfo: [CodingUserInfoKey: any Sendable] { [ChannelSettings.typesKey: all] }
}
