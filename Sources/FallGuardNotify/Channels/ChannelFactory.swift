import FallGuardCore

extension NotificationSettings {
    /// Builds every configured channel whose type this build implements.
    public func makeChannels(context: ChannelContext) throws -> [any NotificationChannel] {
        try channels.keys.sorted().compactMap { name in
            try channels[name]?.options?.makeChannel(named: name, context: context)
        }
    }
}
