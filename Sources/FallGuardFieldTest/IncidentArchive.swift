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

    /// Whether `id` may name an incident's folder: 1 to 64 ASCII letters, digits, `-`, `_`
    /// and `.`, not beginning with `.` (`FG-12`, `FG-fault-3`): never a path. Every way an id
    /// enters (the command line, the page, a record read from disk) is checked against it.
    public static func isValidID(_ id: some StringProtocol) -> Bool {
        !id.isEmpty && id.count <= 64 && id.first != "." && id.allSatisfy {
            $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".")
        }
    }

    /// `id` itself when it is valid, else a thrown ``IncidentIDError``.
    public static func checked(_ id: String) throws(IncidentIDError) -> String {
        guard isValidID(id) else { throw IncidentIDError(id: id, reason: "not an incident id (letters, digits, - _ . only)") }
        return id
    }

    /// One incident's folder (callers that take an id from outside check it first: ``checked(_:)``).
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
            guard Self.isValidID(id) else { unreadable.append("\(path(of: id)): not an incident id"); continue }
            do { records.append(try record(id)) } catch { unreadable.append("\(recordPath(of: id)): \(error)") }
        }
        return (records.sorted { ($0.eventWallTime, $0.id) < ($1.eventWallTime, $1.id) }, unreadable)
    }

    /// The record of `id`: the id must be valid and the record must name its own folder (a
    /// record whose `id` says `../x` would otherwise be written back there).
    public func record(_ id: String) throws -> IncidentRecord {
        let id = try Self.checked(id)
        let fd = StateFiles.open(recordPath(of: id), O_RDONLY | O_NONBLOCK)
        guard fd >= 0 else {
            // No absolute path in what a caller may show (the page answers with it).
            if errno == ENOENT { throw IncidentIDError(id: id, reason: "no such incident") }
            throw ArchiveError(path: recordPath(of: id), code: errno)
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        guard let data = try handle.read(upToCount: Self.maximumRecordBytes + 1), data.count <= Self.maximumRecordBytes else {
            throw IncidentIDError(id: id, reason: "incident.json is empty or larger than \(Self.maximumRecordBytes / 1024) KiB")
        }
        let r = try JSONDecoder().decode(IncidentRecord.self, from: data)
        guard r.id == id else { throw IncidentIDError(id: id, reason: "its incident.json names another incident") }
        return r
    }

    /// The signal of `record`, read no further than its window (`before` + `after`, at most the
    /// longest the recorder keeps, 1,200 s): a planted file larger than an incident's signal is
    /// refused, not read (the page and `evaluate` read signals with it).
    public func signal(of record: IncidentRecord) throws(RecordingFileError) -> Recording {
        guard Self.isValidID(record.id) else { throw RecordingFileError(path: path(of: record.id), reason: "not an incident id") }
        let window = min(max(record.before, 0) + max(record.after, 0), Self.longestWindow)
        return try RecordingFile.read(path: signalPath(of: record.id), limits: .window(seconds: window.isFinite ? window : Self.longestWindow))
    }

    /// `recording.incident-before` + `incident-after` at most (600 s each).
    public static let longestWindow = 1200.0

    /// A record is a few KiB (its steps, deliveries and labels).
    public static let maximumRecordBytes = 1 << 20

    /// Writes the record of `record.id` atomically (a temporary file, fsync, rename), creating
    /// its folder (0700) when needed; the file is 0600.
    public func write(_ record: IncidentRecord) throws {
        try prepareFolder(of: record.id)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try Self.writeAtomically(try encoder.encode(record), to: recordPath(of: record.id))
    }

    /// Writes the signal of `id` (a timed recording's text) beside its record.
    public func writeSignal(_ text: String, of id: String) throws {
        try prepareFolder(of: id)
        try Self.writeAtomically(Data(text.utf8), to: signalPath(of: id))
    }

    /// Makes the archive's folder and that of `id` (0700) where they are missing. The id must
    /// be valid, and the folder holding the archive (the state directory), the archive and the
    /// incident's folder must each be a real folder this user owns that nobody else may write
    /// in: otherwise nothing is written (a planted link there would lead the write elsewhere).
    public func prepareFolder(of id: String) throws {
        let id = try Self.checked(id)
        let parent = (folder as NSString).deletingLastPathComponent
        if let why = StateFiles.distrust(of: parent.isEmpty ? "." : parent) {
            throw UnusableFolder(why)
        }
        try Self.makeFolder(folder)
        try Self.makeFolder(path(of: id))
    }

    /// Sets the label of `id` (its history keeps every earlier one); returns the record.
    @discardableResult
    public func label(_ id: String, _ entry: IncidentLabelEntry) throws -> IncidentRecord {
        var r = try record(id)
        r.labels.append(entry)
        try write(r)
        return r
    }

    /// Makes `path` (0700) unless it is there; one that is a link, or that another user owns
    /// or may write in, is refused (``StateFiles/prepare(_:)``).
    public static func makeFolder(_ path: String) throws {
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "\(path): \(String(cString: strerror(errno)))"])
        }
        if let why = StateFiles.prepare(path) {
            throw UnusableFolder(why)
        }
    }

    /// `data` into `path` through `path.tmp` (``StateFiles/writeAtomically(_:to:)``: made
    /// afresh without following a link, fsynced, renamed), mode 0600.
    public static func writeAtomically(_ data: Data, to path: String) throws {
        do { try StateFiles.writeAtomically(data, to: path) } catch { throw ArchiveError(path: error.path, code: error.code) }
    }
}

/// An incident id that cannot name a folder of the archive, or a record that names another.
public struct IncidentIDError: Error, CustomStringConvertible {
    public var id: String
    public var reason: String
    public var description: String { "\(id.debugDescription): \(reason)" }
}

/// A file of the archive that could not be written: `path: reason`.
public struct ArchiveError: Error, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var description: String { "\(path): \(String(cString: strerror(code)))" }
}
