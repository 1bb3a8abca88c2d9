import CZlib
import FallGuardCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why the recording could not be written: the file and the system's reason.
public struct RecordingWriteError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

/// Hourly compressed recordings of the 40 Hz stream: `<directory>/<YYYY-MM-DDTHH>.csv.gz`
/// (the UTC hour of the first sample; `-2`, `-3`, … when a restart finds the hour's file), the
/// header `t_s,x_g,y_g,z_g` (0.1 ms, 1 mg; `t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps` with 0.01 °/s when
/// the samples carry a gyroscope's angular velocity, and a new file when that changes) and one wall-clock anchor (`# wall-clock <ISO 8601> at t_s <s>`),
/// read as they are by `replay`, `evaluate` and `report`. One gzip stream per file (the
/// dictionary carries over: a day of constant activity fits in 30 MB); each ``flush()`` ends a
/// deflate block on a byte boundary (`Z_SYNC_FLUSH`) and syncs it, so a power cut loses at
/// most what came after the last flush, and a file cut short reads up to there. Used from one
/// thread.
public final class RecordingWriter {
    public let directory: String
    /// The state directory `directory` lies in (the default `<state>/recordings`), which must be
    /// the daemon's own too: a state directory that is a link, or another user's, is refused as
    /// it is everywhere else (``StateFiles/distrust(of:)``), not written through.
    public let within: String?
    /// The most the directory's recordings may take; the oldest files go first, never the
    /// one being written.
    public let keepBytes: Int64
    /// zlib's default level: 9 saves 1.5 % of the size for several times the CPU.
    static let level: Int32 = 6
    /// Acceleration to 1 mg, as the development datasets give it: below both sensors' noise
    /// (an MPU6050 at ±16 g steps by 0.49 mg with about 2 mg of noise, an ADXL345 by 3.9 mg),
    /// and what keeps a day of constant activity near 30 MB (0.1 mg: about 35 MB).
    public static let valueDigits = 3

    public private(set) var currentPath: String?
    /// Bytes of compressed recording this writer appended.
    public private(set) var bytesWritten: Int64 = 0
    /// Rows handed to ``append(_:wallTime:)`` and not yet written.
    public var pendingRows: Int { rows }

    private var fd: Int32 = -1
    private var hour: Int64 = -1
    /// Whether the open file has the gyroscope's columns.
    private var fileHasGyro = false
    private var text: [UInt8] = []
    private var output: [UInt8] = []
    private var rows = 0
    /// The deflate stream of the open file (zlib keeps a pointer to it: it must not move).
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var streaming = false
    /// Offset of the end of the last synced block (a failed write is cut back to it).
    private var goodLength: off_t = 0

    public init(directory: String, keepBytes: Int64, within: String? = nil) {
        (self.directory, self.keepBytes, self.within) = (directory, keepBytes, within)
        text.reserveCapacity(64 * 1024)
        output.reserveCapacity(64 * 1024)
    }

    deinit {
        closeFile()
        stream.deallocate()
    }

    /// Adds one sample (`time` on the stream's clock, `wallTime` the same moment in seconds
    /// since 1970). A new UTC hour finishes the current file and starts the next one; so does a
    /// sample that has a gyroscope's reading where the file has none, or the other way round.
    public func append(_ s: AccelerationSample, wallTime: Double) throws(RecordingWriteError) {
        let h = Int64((wallTime / 3600).rounded(.down))
        if h != hour || fd < 0 || (s.gyro != nil) != fileHasGyro {
            if fd >= 0 { try close() }
            text.removeAll(keepingCapacity: true)
            rows = 0
            try open(hour: h)   // until it opens, every sample tries again (and is dropped)
            hour = h
            fileHasGyro = s.gyro != nil
            append(line: Recording.timedHeader(for: s))
            append(line: Self.anchor(streamTime: s.time, wallTime: wallTime))
        }
        Recording.appendRow(s, valueDigits: Self.valueDigits, to: &text)
        text.append(0x0A)
        rows += 1
    }

    /// The note that ties a file's `t_s` to the wall clock: `# wall-clock <ISO 8601 UTC> at t_s
    /// <seconds>`, at the whole second before `wallTime` (so the two are exact).
    public static func anchor(streamTime: Double, wallTime: Double) -> String {
        let second = wallTime.rounded(.down)
        return "# wall-clock \(iso8601(secondsSince1970: second)) at t_s \(fixedDecimal(streamTime - (wallTime - second), digits: 4))"
    }

    private func append(line: String) {
        text.append(contentsOf: line.utf8)
        text.append(0x0A)
    }

    /// Compresses what was appended since the last flush, ends the block on a byte boundary
    /// and syncs the file. On failure the file is cut back to its last synced block and closed
    /// (it reads up to there), the rows are dropped (counted by the caller), and the next
    /// sample starts a new file: memory stays bounded and every file stays readable.
    public func flush() throws(RecordingWriteError) {
        try write(finishing: false)
    }

    /// Finishes the stream (the gzip trailer) and closes the file.
    public func close() throws(RecordingWriteError) {
        guard fd >= 0 else { return }
        defer { closeFile() }
        try write(finishing: true)
    }

    private func write(finishing: Bool) throws(RecordingWriteError) {
        guard fd >= 0, streaming, !text.isEmpty || finishing else { return }
        output.removeAll(keepingCapacity: true)
        var status: Int32 = Z_OK
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        text.withUnsafeMutableBytes { input in
            stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_in = uInt(input.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBytes { c in
                    stream.pointee.next_out = c.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(c.count)
                    status = deflate(stream, finishing ? Z_FINISH : Z_SYNC_FLUSH)
                    return c.count - Int(stream.pointee.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
            } while status == Z_OK && stream.pointee.avail_out == 0
            stream.pointee.next_in = nil
        }
        text.removeAll(keepingCapacity: true)
        rows = 0
        var failure: Int32? = (status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR) ? nil : EIO
        if failure == nil {
            output.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                    if n < 0 { if errno == EINTR { continue }; failure = errno; return }
                    done += n
                }
                if fsync(fd) != 0 { failure = errno }
            }
        }
        if let failure {
            let path = currentPath ?? directory
            _ = ftruncate(fd, goodLength)
            if goodLength == 0 { unlink(path) }   // nothing of it was ever written: no empty files
            closeFile()
            throw RecordingWriteError(path: directory, reason: String(cString: strerror(failure)))
        }
        goodLength += off_t(output.count)
        bytesWritten += Int64(output.count)
    }

    private func closeFile() {
        if streaming { deflateEnd(stream); streaming = false }
        if fd >= 0 { Glibc.close(fd); fd = -1 }
        currentPath = nil
    }

    private func open(hour h: Int64) throws(RecordingWriteError) {
        if let within, let why = StateFiles.distrust(of: within) {
            throw RecordingWriteError(path: directory, reason: "not used: \(why)")
        }
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw RecordingWriteError(path: directory, reason: String(cString: strerror(errno)))
        }
        if let why = StateFiles.prepare(directory) { throw RecordingWriteError(path: directory, reason: "not used: \(why)") }
        let stem = String(iso8601(secondsSince1970: Double(h) * 3600).prefix(13))   // 2026-11-24T02
        var n = 1
        while true {
            let path = directory + "/" + stem + (n == 1 ? "" : "-\(n)") + ".csv.gz"
            let f = StateFiles.open(path, O_WRONLY | O_CREAT | O_EXCL)
            if f >= 0 {
                stream.initialize(to: z_stream())
                guard fg_deflate_init_gzip(stream, Self.level) == Z_OK else {
                    Glibc.close(f)
                    unlink(path)
                    throw RecordingWriteError(path: path, reason: "zlib could not start")
                }
                (fd, currentPath, goodLength, streaming) = (f, path, 0, true)
                pruneToBudget()
                return
            }
            guard errno == EEXIST, n < 1000 else { throw RecordingWriteError(path: path, reason: String(cString: strerror(errno))) }
            n += 1
        }
    }

    /// The recordings in the directory (`*.csv.gz`), oldest first, with their sizes.
    public static func files(in directory: String) -> [(path: String, bytes: Int64)] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var out: [(String, Int64)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard name.hasSuffix(".csv.gz") else { continue }
            var st = stat()
            let path = directory + "/" + name
            if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { out.append((path, Int64(st.st_size))) }
        }
        // Names begin with the UTC hour (13 characters): by hour, then `-2`, `-3` after the first.
        func key(_ path: String) -> (String, Int) {
            let stem = (path as NSString).lastPathComponent.dropLast(".csv.gz".count)
            let hour = String(stem.prefix(13))
            return (hour, stem.count > 14 ? Int(stem.dropFirst(14)) ?? 0 : 1)
        }
        return out.sorted { key($0.0) < key($1.0) }
    }

    /// Deletes the oldest recordings until the directory fits ``keepBytes``; never the current.
    public func pruneToBudget() {
        var files = Self.files(in: directory)
        var total = files.reduce(0) { $0 + $1.bytes }
        while total > keepBytes, let oldest = files.first, oldest.path != currentPath {
            if unlink(oldest.path) == 0 { total -= oldest.bytes }
            files.removeFirst()
        }
    }
}
