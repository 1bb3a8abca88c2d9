import FallGuardFieldTest
import Foundation
import GRDB
import Synchronization

/// The outbox's SQLite file, opened when it can be: at start, or later, tried again at most
/// once a second while it cannot (a read-only or full disk, a state directory the daemon must
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

    /// The open database, opening it now if it was not (at most once per ``retryInterval``).
    func pool() throws -> DatabasePool {
        try state.withLock { s in
            if let pool = s.pool { return pool }
            let now = Double(DispatchTime.now().uptimeNanoseconds) * 1e-9
            if now - s.lastTry < Self.retryInterval, let failure = s.failure { throw OutboxUnavailable(path: path, reason: failure) }
            s.lastTry = now
            do {
                let pool = try open()
                (s.pool, s.failure) = (pool, nil)
                return pool
            } catch {
                s.failure = "\(error)"
                throw OutboxUnavailable(path: path, reason: "\(error)")
            }
        }
    }

    /// Opens now (the first attempt); throws why it cannot.
    func openNow() throws { _ = try pool() }

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
