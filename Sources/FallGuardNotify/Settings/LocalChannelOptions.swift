import FallGuardCore
import Foundation

/// `type: exec`: runs `command` (an argv list, no shell) with the ``AlertPayload`` JSON on
/// standard input. Exit 0 is delivered; see ``ExecChannel`` for how other exits are judged.
public struct ExecOptions: ChannelOptions, Equatable {
    public static let type = "exec"
    /// Key `command`: the program and its arguments, e.g. `[/usr/local/bin/page-nurse, --urgent]`.
    public var command: [String]
    /// Key `timeout`: seconds before the command is killed (a transient failure), default 30.
    public var timeout: Double
    public var addressing: ChannelAddressing { .broadcast }

    public init(command: [String], timeout: Double = 30) {
        self.command = command
        self.timeout = timeout
    }

    private enum CodingKeys: String, CodingKey { case command, timeout }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        command = try c.value(.command, or: [])
        timeout = try c.value(.timeout, or: 30)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var found = ConfigCheck.seconds(timeout, in: 0.1...3600, at: path + ["timeout"])
        guard let program = command.first, !program.isEmpty else {
            return found + [ConfigProblem(path + ["command"], "must name a program to run")]
        }
        if ExecChannel.resolve(program) == nil {
            found.append(ConfigProblem(path + ["command", "0"], "'\(program)' is not an executable file (nor found on PATH)"))
        }
        return found
    }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        ExecChannel(name: name, options: self)
    }
}

/// `type: console`: prints each message, for trying the configuration out.
public struct ConsoleOptions: ChannelOptions, Equatable {
    public static let type = "console"
    public var addressing: ChannelAddressing { .broadcast }

    public init() {}
    public init(from decoder: any Decoder) throws {}
    public func encode(to encoder: any Encoder) throws {}
    public func problems(at path: [String]) -> [ConfigProblem] { [] }

    public func makeChannel(named name: String, context: ChannelContext) throws -> any NotificationChannel {
        ConsoleChannel(name: name, write: context.write)
    }
}
