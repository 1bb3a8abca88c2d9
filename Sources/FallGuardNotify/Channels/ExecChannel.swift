import Foundation

/// Runs a configured command (argv, no shell) with the ``AlertPayload`` JSON on standard input.
///
/// Exit 0 is delivered. A command that cannot run (126: not executable, 127: not found) is
/// permanent; any other non-zero exit (a pager's `EX_UNAVAILABLE` while its modem is busy
/// included), a signal, or running past the timeout (the command and everything it started are
/// then killed) is transient, so the outbox tries again until the message's deadline. The
/// command sees a minimal environment, not the bridge's (see ``ChildProcess``).
public struct ExecChannel: NotificationChannel {
    public let name: String
    let options: ExecOptions

    public init(name: String, options: ExecOptions) { (self.name, self.options) = (name, options) }

    /// The PATH a command is looked up on and runs with: fixed, so that `check-config` run from
    /// an administrator's shell finds the same program as the service (whose PATH is systemd's).
    public static let searchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// The absolute path of `program`: itself when it contains a `/`, else the first match on
    /// ``searchPath`` (never the caller's PATH).
    public static func resolve(_ program: String) -> String? {
        let fm = FileManager.default
        if program.contains("/") { return fm.isExecutableFile(atPath: program) ? program : nil }
        for dir in searchPath.split(separator: ":") where fm.isExecutableFile(atPath: "\(dir)/\(program)") {
            return "\(dir)/\(program)"
        }
        return nil
    }

    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        guard let program = options.command.first, let executable = Self.resolve(program) else {
            throw DeliveryFailure.permanent("\(name): '\(options.command.first ?? "")' is not an executable file")
        }
        let input = try WebhookChannel.jsonBody(delivery.payload)
        let result = try await ChildProcess.run(executable, Array(options.command.dropFirst()), input: input, timeout: options.timeout)
        let detail = "\(program) " + result.describe
        switch result.outcome {
        case .exited(0): return DeliveryReceipt(detail: detail)
        case .exited(126), .exited(127): throw DeliveryFailure.permanent(detail)
        default: throw DeliveryFailure.transient(detail)
        }
    }
}

/// Prints each message: `[name] subject` then the body.
public struct ConsoleChannel: NotificationChannel {
    public let name: String
    let write: @Sendable (String) -> Void

    public init(name: String, write: @escaping @Sendable (String) -> Void) {
        self.name = name
        self.write = write
    }

    public func send(_ delivery: Delivery) async throws -> DeliveryReceipt {
        let to = delivery.recipient.map { " to \($0.name)" } ?? ""
        write("[\(name)\(to)] \(delivery.payload.message.subject)\n\(delivery.payload.message.body)")
        return DeliveryReceipt(detail: "printed")
    }
}
