import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the service is doing, as `sd_notify(3)` does, without libsystemd: one
/// datagram per message to the AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or an
/// abstract name written with a leading `@`).
///
/// With `Type=notify` the unit counts as started at ``ready(status:)``; with `WatchdogSec=`
/// systemd restarts the service unless ``watchdog()`` arrives in time, so call it from the
/// sample loop (through ``WatchdogPinger``), never from a timer that keeps running when the
/// loop has stalled. Sends never block: a full socket queue is reported, not waited for.
public final class SystemdNotifier: Sendable {
    /// The socket as given (`/run/systemd/notify` or `@name`).
    public let socketPath: String
    private let fd: Int32
    private let address: [UInt8]   // a sockaddr_un, `length` bytes of it used

    /// The notifier for `$NOTIFY_SOCKET`, or nil when not run by systemd with `Type=notify`
    /// (or `NotifyAccess=` does not reach this process).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(SystemdNotifyError) -> SystemdNotifier? {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        return try SystemdNotifier(socketPath: path)
    }

    /// Opens a datagram socket for `socketPath` (`/path` or `@abstract-name`).
    public init(socketPath: String) throws(SystemdNotifyError) {
        guard socketPath.hasPrefix("/") || socketPath.hasPrefix("@") else {
            throw .unsupportedAddress(socketPath)
        }
        var name = Array(socketPath.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }   // abstract namespace
        var sun = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: sun.sun_path)
        guard name.count < capacity else { throw .unsupportedAddress(socketPath) }
        sun.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sun.sun_path) { $0.copyBytes(from: name) }
        // A path ends with its NUL; an abstract name is exactly its bytes.
        let length = MemoryLayout<sa_family_t>.size + name.count + (name[0] == 0 ? 0 : 1)
        address = withUnsafeBytes(of: &sun) { Array($0.prefix(length)) }
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        self.socketPath = socketPath
    }

    deinit { close(fd) }

    /// Sends newline-separated `KEY=VALUE` assignments in one datagram.
    public func send(_ assignments: String) throws(SystemdNotifyError) {
        var bytes = Array(assignments.utf8)
        let sent = address.withUnsafeBytes { a in
            bytes.withUnsafeMutableBytes { b in
                a.baseAddress!.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    sendto(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), sa, socklen_t(a.count))
                }
            }
        }
        if sent < 0 { throw .system("sendto \(socketPath)", errno) }
    }

    /// `READY=1`: start-up is complete (the unit leaves "activating"); with an optional status line.
    public func ready(status: String? = nil) throws(SystemdNotifyError) {
        try send("READY=1" + (status.map { "\nSTATUS=" + Self.oneLine($0) } ?? ""))
    }

    /// `WATCHDOG=1`: the service is alive; must arrive within `WatchdogSec=`.
    public func watchdog() throws(SystemdNotifyError) { try send("WATCHDOG=1") }

    /// `STATUS=…`: one line shown by `systemctl status`.
    public func status(_ text: String) throws(SystemdNotifyError) { try send("STATUS=" + Self.oneLine(text)) }

    /// `STOPPING=1`: shutdown has begun.
    public func stopping() throws(SystemdNotifyError) { try send("STOPPING=1") }

    /// `RELOADING=1`: the configuration is being reloaded (send ``ready(status:)`` when done).
    public func reloading() throws(SystemdNotifyError) { try send("RELOADING=1") }

    /// Newlines would start a new assignment: keep a status to one line.
    static func oneLine(_ s: String) -> String {
        String(s.map { $0.isNewline ? " " : $0 })
    }
}

/// Why a notification could not be sent.
public enum SystemdNotifyError: Error, Equatable, CustomStringConvertible {
    /// `$NOTIFY_SOCKET` is neither a path nor an `@` abstract name (or too long).
    case unsupportedAddress(String)
    /// A system call failed with this errno.
    case system(String, Int32)

    public var description: String {
        switch self {
        case let .unsupportedAddress(a): return "NOTIFY_SOCKET '\(a)' is not a supported AF_UNIX address"
        case let .system(what, code): return "\(what): \(String(cString: strerror(code)))"
        }
    }
}
