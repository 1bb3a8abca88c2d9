import FallGuardCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A recording that could not be read: which file, which line (when known) and why.
public struct RecordingFileError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var reason: String

    public init(path: String, line: Int? = nil, reason: String) { (self.path, self.line, self.reason) = (path, line, reason) }

    /// `path:line: reason`, the form editors and CI logs understand.
    public var description: String {
        if let line { return "\(path):\(line): \(reason)" }
        return "\(path): \(reason)"
    }
}

public enum RecordingFile {
    /// Reads and parses a recording file: CSV, or CSV in gzip (`.csv.gz`, told by its first bytes).
    public static func read(path: String) throws(RecordingFileError) -> Recording {
        var buffer: [UInt8] = []
        return try read(path: path, reusing: &buffer)
    }

    /// Reads a recording, reusing `buffer` for the file's bytes (for loops over many files).
    public static func read(path: String, reusing buffer: inout [UInt8]) throws(RecordingFileError) -> Recording {
        // O_NONBLOCK: opening a FIFO named *.csv must not wait for a writer; it is refused below.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw RecordingFileError(path: path, reason: systemError(errno)) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw RecordingFileError(path: path, reason: systemError(errno)) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw RecordingFileError(path: path, reason: "not a regular file (a FIFO, device or socket is not a recording)") }
        let size = Int(st.st_size)
        if buffer.count < size + 1 { buffer = [UInt8](repeating: 0, count: size + 1) }
        var total = 0
        let readError: Int32? = buffer.withUnsafeMutableBytes { raw in
            while total < size {
                let n = Glibc.read(fd, raw.baseAddress! + total, size - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if n == 0 { break }
                total += n
            }
            return nil
        }
        if let readError { throw RecordingFileError(path: path, reason: systemError(readError)) }
        let parsed = buffer.withUnsafeBytes { raw in
            Result { () throws(RecordingFileError) -> Recording in
                let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<total])
                do {
                    guard Gzip.isGzip(bytes) else { return try RecordingParser.parse(bytes) }
                    // A recording the bridge was writing when it stopped ends with a cut member:
                    // its whole lines are read (at most one flush interval is lost).
                    let inflated = try Gzip.inflate(bytes).bytes
                    return try inflated.withUnsafeBytes { (text) throws(RecordingFormatError) in try RecordingParser.parse(text) }
                } catch let error as GzipError {
                    throw RecordingFileError(path: path, reason: error.reason)
                } catch let error as RecordingFormatError {
                    throw RecordingFileError(path: path, line: error.line, reason: error.reason)
                } catch {
                    throw RecordingFileError(path: path, reason: "\(error)")
                }
            }
        }
        return try parsed.get()
    }

    static func systemError(_ code: Int32) -> String { String(cString: strerror(code)) }
}
