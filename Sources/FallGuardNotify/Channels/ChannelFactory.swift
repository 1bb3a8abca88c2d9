import FallGuardCore

extension NotificationSettings {
    /// Builds every configured channel; throws the first that cannot start.
    public func makeChannels(context: ChannelContext) throws -> [any NotificationChannel] {
        let (made, failures) = makeEachChannel(context: context)
        if let first = failures.min(by: { $0.key < $1.key }) { throw first.value }
        return made
    }

    /// Builds every configured channel that can start, and says why each other one cannot
    /// (a file it needs cannot be read, say), by name.
    public func makeEachChannel(context: ChannelContext) -> (channels: [any NotificationChannel], failures: [String: any Error]) {
        var made: [any NotificationChannel] = [], failures: [String: any Error] = [:]
        for name in channels.keys.sorted() {
            do {
                if let channel = try channels[name]?.makeChannel(named: name, context: context) { made.append(channel) }
            } catch {
                failures[name] = error
            }
        }
        return (made, failures)
    }
}
