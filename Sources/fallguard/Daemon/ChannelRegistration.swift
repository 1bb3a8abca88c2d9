import FallGuardEmail
import FallGuardMQTT
import FallGuardNotify

// The channel types whose modules sit above FallGuardNotify, made known to the `channels`
// section (`type: mqtt`, `type: email`) before any configuration is read.

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

/// Registers the MQTT and e-mail channel types (idempotent).
func registerChannelTypes() {
    ChannelSettings.register(MQTTChannelSettings.self)
    ChannelSettings.register(EmailChannelSettings.self)
}
