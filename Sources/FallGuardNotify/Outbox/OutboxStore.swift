import FallGuardFieldTest
import Foundation
import GRDB
import Synchronization

/// The outbox's SQLite file, opened when it can be: at start, or later, tried again at most
/// once a second (``openIfDue()``, from the health and status services, never from the alarm thread) while it cannot (a read-only or full disk, a state directory the daemon must
/// not use). Until then every access throws ``OutboxUnavailable``, which the hand-off treats as
/// any other failing write: alerts held in memory and sent directly through the channels.
///
/// Before each opening the folder is checked (`folderCheck`: its owner and mode) and the
/// file and its `-wal`, `-shm` and `-journal` companions must be regular files or absent:
/// GRDB 7 offers no `SQLITE_OPEN_NOFOLLOW`, and in a folder nobody else can write, nothing can
/// be planted between this check and SQLite's open.
final class OutboxStore: Sendable {
    let path: String
    private let folderCheck: @Sendable () -> String?
    private let state = Mutex<(pool: DatabasePool?, failure: String?, lastTry: Double)>((nil, nil, -.infinity))
    /// Seconds between attempts while the file cannot be opened.
    static let retryInterval = 1.0

    init(path: String, folderCheck: @escaping @Sendable () -> String? = { nil }) {
        self.path = path
        self.folderCheck = folderCheck
    }

    /// The open database; throws at once while it is not open (the alarm thread must never
    /// wait on an opening: SQLite's busy timeout is 10 s).
    func pool() throws -> DatabasePool {
        try state.withLock { s in
            if let pool = s.pool { return pool }
            throw OutboxUnavailable(path: path, reason: s.failure ?? "not open yet")
        }
    }

    /// Opens the file if it is not open and the last attempt is at least ``retryInterval`` old
    /// (the health and status services call it every second, through ``Outbox/unavailable``). Returns why
    /// it is still not open, nil once it is.
    @discardableResult
    func openIfDue() -> String? {
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

    /// Opens now (the first attempt); throws why it cannot.
    func openNow() throws {
        if let why = openIfDue() { throw OutboxUnavailable(path: path, reason: why) }
    }

    /// Nil once open; otherwise why the file could not be opened on the last attempt.
    var failure: String? { state.withLock { $0.pool == nil ? $0.failure : nil } }

    private func open() throws -> DatabasePool {
        if let why = folderCheck() { throw OutboxUnavailable(path: path, reason: why) }
        for suffix in ["", "-wal", "-shm", "-journal"] where !StateFiles.isRegularOrAbsent(path + suffix) {
            throw OutboxUnavailable(path: path, reason: "\(path + suffix) is a link or not a regular file")
        }
        return try OutboxSchema.open(path: path)
    }
}

/// The outbox file is not open: why.
public struct OutboxUnavailable: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { reason.hasPrefix(path) ? reason : "\(path): \(reason)" }
}
