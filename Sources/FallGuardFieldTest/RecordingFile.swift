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

/// How much of a recording a reader takes: the text (inflated) and the rows. Past either, the
/// file is refused without reading further: a bomb costs at most these, never the whole.
public struct RecordingLimits: Sendable, Equatable {
    /// Bytes of CSV text, inflated for a `.csv.gz`.
    public var textBytes: Int
    public var rows: Int

    public init(textBytes: Int, rows: Int) { (self.textBytes, self.rows) = (textBytes, rows) }

    /// A recording file: a day at 40 Hz is 3.46 million rows and about 120 MB of text; the
    /// samples of the most it takes are 4 million × 32 bytes.
    public static let file = RecordingLimits(textBytes: Gzip.inflatedLimit, rows: 4_000_000)

    /// `seconds` of signal at 40 Hz with a margin, at most 64 bytes a row.
    public static func window(seconds: Double) -> RecordingLimits {
        let rows = Int(max(1, min(seconds, 86_400)) * detectorRate) + 400
        return RecordingLimits(textBytes: rows * 64 + 4096, rows: rows)
    }
}

public enum RecordingFile {
    /// Reads and parses a recording file: CSV, or CSV in gzip (`.csv.gz`, told by its first
    /// bytes), within `limits`. The text is parsed as it is read or inflated (never held whole).
    public static func read(path: String, limits: RecordingLimits = .file) throws(RecordingFileError) -> Recording {
        var buffer: [UInt8] = []
        return try read(path: path, limits: limits, reusing: &buffer)
    }

    /// Reads a recording, reusing `buffer` for the file's bytes (for loops over many files).
    public static func read(path: String, limits: RecordingLimits = .file, reusing buffer: inout [UInt8]) throws(RecordingFileError) -> Recording {
        // O_NONBLOCK: opening a FIFO named *.csv must not wait for a writer; it is refused below.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw RecordingFileError(path: path, reason: systemError(errno)) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw RecordingFileError(path: path, reason: systemError(errno)) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw RecordingFileError(path: path, reason: "not a regular file (a FIFO, device or socket is not a recording)") }
        let size = Int(st.st_size)
        guard size <= limits.textBytes else {
            throw RecordingFileError(path: path, reason: "\(size) bytes: larger than the \(limits.textBytes >> 10) KiB read here")
        }
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
                    guard Gzip.isGzip(bytes) else { return try RecordingParser.parse(bytes, maximumRows: limits.rows) }
                    // A recording the bridge was writing when it stopped ends with a cut member:
                    // its whole lines are read (at most one flush interval is lost).
                    var stream = RecordingParser.Stream(maximumRows: limits.rows)
                    // A damaged member inflates to garbage before zlib sees it: the text's first
                    // error is kept while the rest is checked, so damage is named as such. Past
                    // the row limit it stops at once.
                    var textError: RecordingFormatError?
                    let truncated = try Gzip.inflate(bytes, limit: limits.textBytes) { piece in
                        guard textError == nil else { return }
                        let fed = Result { () throws(RecordingFormatError) in try stream.feed(piece) }
                        if case let .failure(error) = fed {
                            if stream.rows >= limits.rows { throw error }
                            textError = error
                        }
                    }
                    if let textError { throw textError }
                    return try stream.finish(droppingPartialLine: truncated)
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
