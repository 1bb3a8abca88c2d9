import Foundation
import Synchronization

/// A child process run to completion with input on its standard input and a time limit.
///
/// Foundation starts the command as the leader of a process group of its own, so the timeout
/// kills whatever it started too (`kill(-pid)`). It gets a minimal environment
/// (``environment``): never the bridge's, which may hold credentials given through `${ENV}`.
struct ChildProcess {
    enum Outcome: Equatable {
        case exited(Int32)
        case signalled(Int32)
        case timedOut
    }

    struct Result {
        var outcome: Outcome
        /// The end of what it wrote to standard error.
        var stderr: String
        /// What it wrote to standard output (empty unless asked for).
        var stdout = ""

        var describeOutcome: String {
            switch outcome {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let sig): "was killed by signal \(sig)"
            case .timedOut: "ran past its timeout and was killed with everything it started"
            }
        }

        var describe: String { stderr.isEmpty ? describeOutcome : "\(describeOutcome): \(stderr)" }
    }

    /// What the command sees: a fixed PATH, the locale and time zone, nothing else.
    static var environment: [String: String] {
        var env = ["PATH": ExecChannel.searchPath]
        for (key, value) in ProcessInfo.processInfo.environment
        where key == "LANG" || key == "TZ" || key.hasPrefix("LC_") {
            env[key] = value
        }
        return env
    }

    /// How long standard error may stay open after the command exited (a background child
    /// that inherited it) before the attempt ends without the rest.
    static let stderrGrace = 1.0

    /// The most of a command's standard output kept.
    static let outputLimit = 1 << 20

    /// Runs `executable` with `arguments`; kills its process group (SIGKILL) after `timeout` s.
    /// With `captureOutput`, its standard output (at most ``outputLimit`` bytes) is kept.
    static func run(_ executable: String, _ arguments: [String], input: Data, timeout: Double,
                    environment: [String: String] = ChildProcess.environment, captureOutput: Bool = false) async throws -> Result {
        // A command that exits without reading its input must not kill the bridge with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.environment = environment
        let stdin = Pipe(), stderr = Pipe(), stdout = Pipe()
        p.standardInput = stdin
        p.standardError = stderr
        p.standardOutput = captureOutput ? stdout : FileHandle.nullDevice
        let finished = AsyncStream<Void>.makeStream()
        p.terminationHandler = { _ in finished.continuation.finish() }
        do { try p.run() } catch {
            throw DeliveryFailure.transient("cannot start \(executable): \(error)")
        }
        let pid = p.processIdentifier
        // Its own process group when Foundation made one (it does on Linux), else the process.
        let group = getpgid(pid) == pid ? -pid : pid
        let killer = Task {
            do { try await Task.sleep(for: .milliseconds(Int64(timeout * 1000))) } catch { return false }
            kill(group, SIGKILL)
            return true
        }
        // Blocking pipe I/O runs on its own threads: a command that does not read its input or
        // writes much must not hold a thread of the cooperative pool.
        let stdinHandle = stdin.fileHandleForWriting
        Thread.detachNewThread {
            try? stdinHandle.write(contentsOf: input)
            try? stdinHandle.close()
        }
        let collected = StderrCollector()
        let stderrHandle = stderr.fileHandleForReading
        Thread.detachNewThread {
            while case let d = stderrHandle.availableData, !d.isEmpty { collected.append(d) }
            collected.close()
        }
        let output = StderrCollector()
        if captureOutput {
            let stdoutHandle = stdout.fileHandleForReading
            Thread.detachNewThread {
                while case let d = stdoutHandle.availableData, !d.isEmpty {
                    if output.data.count < outputLimit { output.append(d) }
                }
                output.close()
            }
        } else {
            output.close()
        }
        for await _ in finished.stream {}
        killer.cancel()
        let timedOut = await killer.value
        if p.isRunning {
            // The stream also ends when the caller's task is cancelled (a stop, a follow-up
            // whose owner ended): the command goes with it. Reading a running process's
            // termination reason traps in Foundation (seen: mmcli polled at a test's end).
            // It is reaped on a thread of its own: waiting here would hold a thread of the
            // cooperative pool for as long as the kernel takes to end it.
            kill(group, SIGKILL)
            nonisolated(unsafe) let killed = p
            Thread.detachNewThread { killed.waitUntilExit() }
            throw CancellationError()
        }
        await collected.waitForEnd(upTo: stderrGrace)
        await output.waitForEnd(upTo: stderrGrace)
        let tail = String(decoding: collected.data.suffix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let outcome: Outcome = timedOut ? .timedOut
            : p.terminationReason == .exit ? .exited(p.terminationStatus) : .signalled(p.terminationStatus)
        return Result(outcome: outcome, stderr: tail, stdout: String(decoding: output.data, as: UTF8.self))
    }
}

/// What a command wrote to standard error, gathered on a reader thread.
private final class StderrCollector: Sendable {
    private let state = Mutex<(data: Data, closed: Bool)>((Data(), false))

    func append(_ d: Data) { state.withLock { $0.data.append(d) } }
    func close() { state.withLock { $0.closed = true } }
    var data: Data { state.withLock { $0.data } }

    /// Returns at the end of the stream or after `seconds`, whichever comes first.
    func waitForEnd(upTo seconds: Double) async {
        let end = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while !state.withLock({ $0.closed }), ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
