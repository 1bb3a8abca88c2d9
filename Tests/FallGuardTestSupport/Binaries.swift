import Foundation

/// An executable that `swift build` / `swift test` put beside the test bundle (`fallguard`,
/// `fallguard-mqtt-probe`).
public func builtBinary(_ name: String) -> String {
    var dir = Bundle.main.bundleURL
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name).path
}

/// The `fallguard` program under test: the one built beside the tests, or $FALLGUARD_BINARY
/// (another build of it, e.g. the arm64 program through a qemu-aarch64 wrapper: bench/arm64.sh).
public let fallguardBinary = ProcessInfo.processInfo.environment["FALLGUARD_BINARY"].flatMap { $0.isEmpty ? nil : $0 }
    ?? builtBinary("fallguard")

/// What a finished command printed.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// stdout lines that are JSON objects.
    public var events: [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

/// Runs `executable` with no standard input and `environment` over the test's own, reading
/// both pipes at once so that neither fills up.
public func runCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    try p.run()
    // The standard error reader hands its data over through a semaphore (a happens-before
    // edge ThreadSanitizer sees), not by polling the thread's state.
    nonisolated(unsafe) var errData = Data()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        done.signal()
    }
    let o = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    done.wait()
    return CommandResult(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
}

/// Runs `fallguard` with `arguments`.
public func fallguard(_ arguments: String...) throws -> CommandResult { try fallguard(arguments) }

/// Runs `fallguard` with `arguments` and `environment` over the test's own.
public func fallguard(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
    try runCommand(fallguardBinary, arguments, environment: environment)
}
