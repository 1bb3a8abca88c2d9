import FallGuardCore
import Foundation

/// Every incident's events as JSON lines in `<state>/incidents.jsonl`, one `write` and one
/// `fdatasync` per line, so a line is on disk before the alarm goes on. Each line is the
/// ``IncidentEvent`` plus `wall-time` (UTC, ISO 8601) for the person reading it.
public final class IncidentLog: @unchecked Sendable {
    // @unchecked: written from the alarm thread only.
    public let path: String
    private let fd: Int32
    private let encoder: JSONEncoder

    /// Creates the directory if needed and opens the file for appending; throws naming it.
    public init(stateDirectory: String) throws {
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        path = stateDirectory + "/incidents.jsonl"
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            throw GPIOError("incident log: cannot open \(path): \(String(cString: strerror(errno)))")
        }
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    deinit { close(fd) }

    /// The highest incident numbers under `prefix` in the file: a new run continues after
    /// them, so `FG-3` never names two incidents (the outbox, acknowledgements and helpers'
    /// messages go by the id).
    public func numbering(prefix: String) -> IncidentNumbering {
        var numbering = IncidentNumbering()
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return numbering }
        let key = #""incident":""#
        for line in text.split(separator: "\n") {
            guard let start = line.range(of: key)?.upperBound, let end = line[start...].firstIndex(of: "\"") else { continue }
            numbering.include(String(line[start..<end]), prefix: prefix)
        }
        return numbering
    }

    /// Appends one event; throws naming the file when the write fails.
    public func append(_ event: IncidentEvent) throws {
        try append(json: String(decoding: try encoder.encode(event), as: UTF8.self))
    }

    /// Appends one JSON object (e.g. a failed dispatch), adding `wall-time`.
    public func append(json object: String) throws {
        let line = "{\"wall-time\":\"\(iso8601(secondsSince1970: Date().timeIntervalSince1970))\"," + object.dropFirst() + "\n"
        let ok = line.utf8CString.withUnsafeBufferPointer { b in
            write(fd, b.baseAddress, b.count - 1) == b.count - 1
        }
        guard ok else { throw GPIOError("incident log: cannot write \(path): \(String(cString: strerror(errno)))") }
        fdatasync(fd)
    }
}
