import FallGuardCore
import FallGuardFieldTest
import Foundation
import Synchronization

/// Every incident's events as JSON lines in `<state>/incidents.jsonl`, one `write` and one
/// `fdatasync` per line, so a line is on disk before the alarm goes on. Each line is the
/// ``IncidentEvent`` plus `wall-time` (UTC, ISO 8601) for the person reading it.
///
/// A file that cannot be opened (owned by root after `sudo fallguard run`, a read-only disk)
/// does not stop the alarm: ``problem`` says why, and every append tries to open it again.
public final class IncidentLog: @unchecked Sendable {
    // @unchecked: `fd` is opened and written from the alarm thread only (after `init`);
    // `trouble` is read from any thread through its mutex.
    public let path: String
    private let stateDirectory: String
    private var fd: Int32 = -1
    private let encoder: JSONEncoder
    private let trouble = Mutex<String?>(nil)

    /// Creates the directory if needed and opens the file for appending. Nothing here stops the
    /// alarm: a directory that cannot be made, or that this user must not write in (another
    /// user owns it or may write in it: ``StateFiles/distrust(of:)``), or a file that cannot be
    /// opened is a ``problem``, and every append tries again.
    public init(stateDirectory: String) throws {
        self.stateDirectory = stateDirectory
        path = stateDirectory + "/incidents.jsonl"
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try? reopen()
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Nil while lines reach the file; otherwise why they do not.
    public var problem: String? { trouble.withLock { $0 } }

    private func reopen() throws {
        if let why = StateFiles.prepare(stateDirectory) {
            let message = "incident log: \(path) not written: \(why)"
            trouble.withLock { $0 = message }
            throw GPIOError(message)
        }
        // Never through a link planted in its place.
        fd = StateFiles.open(path, O_WRONLY | O_CREAT | O_APPEND, mode: 0o640)
        guard fd >= 0 else { throw failure("cannot open") }
    }

    private func failure(_ what: String) -> GPIOError {
        let message = "incident log: \(what) \(path): \(String(cString: strerror(errno)))"
        trouble.withLock { $0 = message }
        return GPIOError(message)
    }

    /// The highest incident numbers under `prefix` in the file: a new run continues after
    /// them, so `FG-3` never names two incidents (the outbox, acknowledgements and helpers'
    /// messages go by the id).
    public func numbering(prefix: String) -> IncidentNumbering {
        var numbering = IncidentNumbering()
        let key = #""incident":""#
        for line in lines() {
            guard let start = line.range(of: key)?.upperBound, let end = line[start...].firstIndex(of: "\"") else { continue }
            numbering.include(String(line[start..<end]), prefix: prefix)
        }
        return numbering
    }

    /// Every line in the file (none when it cannot be read).
    public func lines() -> [Substring] {
        guard StateFiles.isRegularOrAbsent(path) else { return [] }   // a link or a FIFO in its place: not read
        return ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    /// Appends one event; throws naming the file when the write fails.
    public func append(_ event: IncidentEvent) throws {
        try append(json: String(decoding: try encoder.encode(event), as: UTF8.self))
    }

    /// An alert the alarm could not hand to its sink: logged as its own kind of line.
    public struct DispatchFailed: Encodable {
        public var event = "dispatch-failed"
        public var incident: String
        public var alert: String
        public var error: String

        public init(incident: String, alert: String, error: String) { (self.incident, self.alert, self.error) = (incident, alert, error) }
    }

    /// Appends a failed dispatch.
    public func append(_ failure: DispatchFailed) throws {
        try append(json: String(decoding: try encoder.encode(failure), as: UTF8.self))
    }

    /// Appends one JSON object, adding `wall-time`.
    public func append(json object: String) throws {
        let line = "{\"wall-time\":\"\(iso8601(secondsSince1970: Date().timeIntervalSince1970))\"," + object.dropFirst() + "\n"
        if fd < 0 { try reopen() }
        let ok = line.utf8CString.withUnsafeBufferPointer { b in
            write(fd, b.baseAddress, b.count - 1) == b.count - 1
        }
        guard ok else { throw failure("cannot write") }
        guard fdatasync(fd) == 0 else { throw failure("cannot sync") }
        trouble.withLock { $0 = nil }
    }
}
