import Foundation

/// A child process run to completion with input on its standard input and a time limit.
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

        var describe: String {
            let how: String = switch outcome {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let sig): "was killed by signal \(sig)"
            case .timedOut: "ran past its timeout and was killed"
            }
            return stderr.isEmpty ? how : "\(how): \(stderr)"
        }
    }

    /// Runs `executable` with `arguments`; kills it (SIGKILL) after `timeout` seconds.
    static func run(_ executable: String, _ arguments: [String], input: Data, timeout: Double) async throws -> Result {
        // A command that exits without reading its input must not kill the bridge with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let stdin = Pipe(), stderr = Pipe()
        p.standardInput = stdin
        p.standardError = stderr
        p.standardOutput = FileHandle.nullDevice
        let finished = AsyncStream<Void>.makeStream()
        p.terminationHandler = { _ in finished.continuation.finish() }
        do { try p.run() } catch {
            throw DeliveryFailure.transient("cannot start \(executable): \(error)")
        }
        let pid = p.processIdentifier
        let killer = Task {
            do { try await Task.sleep(for: .milliseconds(Int64(timeout * 1000))) } catch { return false }
            kill(pid, SIGKILL)
            return true
        }
        // Blocking pipe I/O runs on its own threads: a command that does not read its input or
        // writes much must not hold a thread of the cooperative pool.
        let stdinHandle = stdin.fileHandleForWriting
        Thread.detachNewThread {
            try? stdinHandle.write(contentsOf: input)
            try? stdinHandle.close()
        }
        let stderrHandle = stderr.fileHandleForReading
        let errData = await withCheckedContinuation { (c: CheckedContinuation<Data, Never>) in
            Thread.detachNewThread { c.resume(returning: stderrHandle.readDataToEndOfFile()) }
        }
        for await _ in finished.stream {}
        killer.cancel()
        let timedOut = await killer.value
        let tail = String(decoding: errData.suffix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let outcome: Outcome = timedOut ? .timedOut
            : p.terminationReason == .exit ? .exited(p.terminationStatus) : .signalled(p.terminationStatus)
        return Result(outcome: outcome, stderr: tail)
    }
}
