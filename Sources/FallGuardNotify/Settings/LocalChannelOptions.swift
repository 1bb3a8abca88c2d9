/// Runs `command` (an argv list, no shell) with the ``AlertPayload`` JSON on standard input.
/// Exit 0 is delivered; see ``ExecChannel`` for how other exits are judged.
public struct ExecOptions: ChannelOptions, Equatable {
    /// The program and its arguments, e.g. `[/usr/local/bin/page-nurse, --urgent]`.
    public var command: [String]
    /// Seconds before the command is killed (a transient failure).
    public var timeout: Double
    public var addressing: ChannelAddressing { .broadcast }

    public init(command: [String], timeout: Double = 30) { (self.command, self.timeout) = (command, timeout) }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        ExecChannel(name: name, options: self)
    }
}

/// Prints each message, for trying the configuration out.
public struct ConsoleOptions: ChannelOptions, Equatable {
    public var addressing: ChannelAddressing { .broadcast }

    public init() {}

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        ConsoleChannel(name: name, write: context.write)
    }
}
