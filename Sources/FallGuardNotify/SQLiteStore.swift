import FallGuardFieldTest
import Foundation
import GRDB
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A SQLite file in a state directory (WAL, `synchronous=FULL`: every commit on the disk
/// before it returns), opened when it can be: at start, or later, tried again at most once a
/// second (``openIfDue()``, from the health and status services, never from the alarm thread)
/// while it cannot (a read-only or full disk, a state directory the process must not use).
/// Until then every access throws ``SQLiteUnavailable``. The bridge's outbox
/// (``OutboxSchema``) and the station's past incidents use it, each with its own migrations.
///
/// Before each opening the folder is checked (`folderCheck`: its owner and mode) and the
/// file and its `-wal`, `-shm` and `-journal` companions must be regular files or absent:
/// GRDB 7 offers no `SQLITE_OPEN_NOFOLLOW`, and in a folder nobody else can write, nothing can
/// be planted between this check and SQLite's open.
public final class SQLiteStore: Sendable {
    public let path: String
    private let folderCheck: @Sendable () -> String?
    private let migrator: DatabaseMigrator
    private let state = Mutex<(pool: DatabasePool?, failure: String?, lastTry: Double)>((nil, nil, -.infinity))
    /// Seconds between attempts while the file cannot be opened.
    static let retryInterval = 1.0

    /// The file at `path` with its tables made and kept by `migrator`, not opened yet.
    /// `folderCheck` says why the folder must not be used (nil when it may).
    public init(path: String, migrator: DatabaseMigrator, folderCheck: @escaping @Sendable () -> String? = { nil }) {
        self.path = path
        self.migrator = migrator
        self.folderCheck = folderCheck
    }

    /// The open database; throws at once while it is not open (the alarm thread must never
    /// wait on an opening: SQLite's busy timeout is 10 s).
    public func pool() throws -> DatabasePool {
        try state.withLock { s in
            if let pool = s.pool { return pool }
            throw SQLiteUnavailable(path: path, reason: s.failure ?? "not open yet")
        }
    }

    /// Opens the file if it is not open and the last attempt is at least ``retryInterval`` old
    /// (the daemon's health service calls it every second, through ``Outbox/retryOpen()``). Returns why
    /// it is still not open, nil once it is.
    @discardableResult
    public func openIfDue() -> String? {
        let due = state.withLock { s -> Bool in
            guard s.pool == nil else { return false }
            let now = Double(DispatchTime.now().uptimeNanoseconds) * 1e-9
            guard now - s.lastTry >= Self.retryInterval else { return false }
            s.lastTry = now
            return true
        }
        if due {
            do {
                let pool = try open()
                state.withLock { s in if s.pool == nil { (s.pool, s.failure) = (pool, nil) } }
            } catch {
                state.withLock { $0.failure = "\(error)" }
            }
        }
        return failure
    }

    /// Opens now if it is not open (at most one attempt a second); throws why it cannot.
    public func openNow() throws {
        if let why = openIfDue() { throw SQLiteUnavailable(path: path, reason: why) }
    }

    /// Nil once open; otherwise why the file could not be opened on the last attempt.
    public var failure: String? { state.withLock { $0.pool == nil ? $0.failure : nil } }

    /// Nil once open; otherwise why not: the last attempt's failure, or "not open yet". Reads
    /// only (``openIfDue()`` tries again).
    public var unopened: String? { state.withLock { $0.pool == nil ? ($0.failure ?? "not open yet") : nil } }

    private func open() throws -> DatabasePool {
        if let why = folderCheck() { throw SQLiteUnavailable(path: path, reason: why) }
        for suffix in ["", "-wal", "-shm", "-journal"] where !StateFiles.isRegularOrAbsent(path + suffix) {
            throw SQLiteUnavailable(path: path, reason: "\(path + suffix) is a link or not a regular file")
        }
        // Made 0600 before SQLite opens it, whatever the process's umask (the station has no
        // systemd UMask when started by hand): SQLite gives its -wal and -shm files the mode of
        // the database file. An existing file keeps its mode, tightened to 0600 if looser.
        let fd = StateFiles.open(path, O_RDWR | O_CREAT, mode: 0o600)
        if fd >= 0 {
            var st = stat()
            if fstat(fd, &st) == 0, st.st_uid == geteuid(), st.st_mode & 0o077 != 0 { fchmod(fd, 0o600) }
            close(fd)
        }
        var config = Configuration()
        config.prepareDatabase { db in
            // Every commit reaches the disk before it returns: an alert survives power loss.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        config.busyMode = .timeout(10)
        let pool = try DatabasePool(path: path, configuration: config)
        try migrator.migrate(pool)
        return pool
    }
}

/// A ``SQLiteStore``'s file is not open: why.
public struct SQLiteUnavailable: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { reason.hasPrefix(path) ? reason : "\(path): \(reason)" }
}

/// The outbox's file is not open (the outbox is a ``SQLiteStore``).
public typealias OutboxUnavailable = SQLiteUnavailable
