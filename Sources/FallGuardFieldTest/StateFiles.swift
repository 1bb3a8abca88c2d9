import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one home of how the daemon makes files in its state directory (issue 28): a folder is
/// used only when this process's user owns it and nobody else may write in it, and every file
/// is opened without following a link, temporaries exclusively. In a folder another user can
/// write, a planted link would make a root daemon write where that user chooses; in one only
/// the daemon can write, nothing can be planted between a check and an open.
public enum StateFiles {
    /// Why `folder` must not hold the daemon's files, or nil when it may: it is a real folder
    /// (not a link), this process's effective user owns it, and neither group nor others may
    /// write in it.
    public static func distrust(of folder: String) -> String? {
        var st = stat()
        guard lstat(folder, &st) == 0 else { return "\(folder): \(String(cString: strerror(errno)))" }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            return (st.st_mode & S_IFMT) == S_IFLNK ? "\(folder) is a symbolic link" : "\(folder) is not a folder"
        }
        guard st.st_uid == geteuid() else {
            return "\(folder) is owned by uid \(st.st_uid) (\(userName(st.st_uid))), not by this process's user (uid \(geteuid())): it could plant links there (run as \(userName(st.st_uid)), e.g. sudo -u \(userName(st.st_uid)), or chown \(userName(geteuid())) \(folder))"
        }
        guard st.st_mode & 0o022 == 0 else {
            return "\(folder) is writable by \(st.st_mode & 0o002 != 0 ? "others" : "its group") (mode 0\(String(st.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// Makes `folder` (0700) if it is missing, makes one this user owns 0700, and returns
    /// ``distrust(of:)``: nil when the daemon may write in it. A folder another user owns is
    /// left as it is (neither chmod nor chown: it is not the daemon's).
    public static func prepare(_ folder: String) -> String? {
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            if errno == ENOENT {   // a missing parent (a fresh state directory's)
                try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                         attributes: [.posixPermissions: 0o700])
            }
        }
        var st = stat()
        if lstat(folder, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == geteuid(), st.st_mode & 0o077 != 0 {
            chmod(folder, 0o700)
        }
        return distrust(of: folder)
    }

    /// `open(2)` that never follows a link at the last step (`O_NOFOLLOW | O_CLOEXEC` added).
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) -> Int32 {
        Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    }

    /// Whether `path` is absent or a regular file: never a link, a FIFO or a device.
    public static func isRegularOrAbsent(_ path: String) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0 else { return errno == ENOENT }
        return (st.st_mode & S_IFMT) == S_IFREG
    }

    /// `data` into `path` through `path.tmp`: the temporary made afresh (a stale one or a link
    /// there removed, then `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600), written, fsynced,
    /// renamed over `path` (rename replaces a link at `path` itself, never its target).
    public static func writeAtomically(_ data: Data, to path: String) throws(StateFileError) {
        let temp = path + ".tmp"
        unlink(temp)
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        guard fd >= 0 else { throw StateFileError(path: temp, code: errno) }
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
        if let failure { unlink(temp); throw StateFileError(path: temp, code: failure) }
        guard rename(temp, path) == 0 else { let e = errno; unlink(temp); throw StateFileError(path: path, code: e) }
    }

    private static func userName(_ uid: uid_t) -> String {
        guard let pw = getpwuid(uid), let name = pw.pointee.pw_name else { return String(uid) }
        return String(cString: name)
    }
}

/// A folder the daemon does not write in, and why (``StateFiles/distrust(of:)``).
public struct UnusableFolder: Error, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "not used: \(reason)" }
}

/// A state file that could not be written: `path: reason`.
public struct StateFileError: Error, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public init(path: String, code: Int32) { (self.path, self.code) = (path, code) }
    public var description: String { "\(path): \(String(cString: strerror(code)))" }
}
