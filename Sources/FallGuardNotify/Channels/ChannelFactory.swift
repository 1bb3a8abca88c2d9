import FallGuardCore

extension NotificationSettings {
    /// Builds every configured channel.
    public func makeChannels(context: ChannelContext) throws -> [any NotificationChannel] {
        try channels.keys.sorted().compactMap { name in
            try channels[name]?.makeChannel(named: name, context: context)
        }
    }
}
