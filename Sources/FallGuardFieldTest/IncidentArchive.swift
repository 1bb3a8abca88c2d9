import FallGuardCore
import Foundation

/// The incident archive: one folder per incident under `<state>/incidents/`, each with
/// `incident.json` (``IncidentRecord``) and `signal.csv` (the signal around the event, a timed
/// recording). Health data: files 0600 in 0700 folders, never sent anywhere.
public struct IncidentArchive: Sendable {
    public let folder: String

    public init(folder: String) { self.folder = folder }

    /// `<state>/incidents`.
    public static func folder(inState stateDirectory: String) -> String { stateDirectory + "/incidents" }

    public static let recordName = "incident.json"
    public static let signalName = "signal.csv"

    /// One incident's folder.
    public func path(of id: String) -> String { folder + "/" + id }
    public func recordPath(of id: String) -> String { path(of: id) + "/" + Self.recordName }
    public func signalPath(of id: String) -> String { path(of: id) + "/" + Self.signalName }

    /// True when `folder` looks like an archive: it holds at least one `<ID>/incident.json`.
    public static func isArchive(_ folder: String) -> Bool {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return ids.contains { FileManager.default.fileExists(atPath: folder + "/" + $0 + "/" + recordName) }
    }

    /// Every incident whose record reads, oldest event first, and the folders whose record does
    /// not (`path: reason`), so a damaged one is named, not skipped in silence.
    public func records() -> (records: [IncidentRecord], unreadable: [String]) {
        let ids = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        var records: [IncidentRecord] = [], unreadable: [String] = []
        for id in ids {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path(of: id), isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            do { records.append(try record(id)) } catch { unreadable.append("\(recordPath(of: id)): \(error)") }
        }
        return (records.sorted { ($0.eventWallTime, $0.id) < ($1.eventWallTime, $1.id) }, unreadable)
    }

    /// The record of `id`.
    public func record(_ id: String) throws -> IncidentRecord {
        try JSONDecoder().decode(IncidentRecord.self, from: Data(contentsOf: URL(fileURLWithPath: recordPath(of: id))))
    }

    /// Writes the record of `record.id` atomically (a temporary file, fsync, rename), creating
    /// its folder (0700) when needed; the file is 0600.
    public func write(_ record: IncidentRecord) throws {
        try Self.makeFolder(folder)
        try Self.makeFolder(path(of: record.id))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try Self.writeAtomically(try encoder.encode(record), to: recordPath(of: record.id))
    }

    /// Sets the label of `id` (its history keeps every earlier one); returns the record.
    @discardableResult
    public func label(_ id: String, _ entry: IncidentLabelEntry) throws -> IncidentRecord {
        var r = try record(id)
        r.labels.append(entry)
        try write(r)
        return r
    }

    public static func makeFolder(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "\(path): \(String(cString: strerror(errno)))"])
        }
    }

    /// `data` into `path` through `path.tmp`: written, fsynced, renamed, mode 0600.
    public static func writeAtomically(_ data: Data, to path: String) throws {
        let temp = path + ".tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ArchiveError(path: temp, code: errno) }
        let failure: Int32? = data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 { if errno == EINTR { continue }; return errno }
                done += n
            }
            return fsync(fd) == 0 ? nil : errno
        }
        close(fd)
        if let failure { unlink(temp); throw ArchiveError(path: temp, code: failure) }
        guard rename(temp, path) == 0 else { let e = errno; unlink(temp); throw ArchiveError(path: path, code: e) }
    }
}

/// A file of the archive that could not be written: `path: reason`.
public struct ArchiveError: Error, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var description: String { "\(path): \(String(cString: strerror(code)))" }
}
