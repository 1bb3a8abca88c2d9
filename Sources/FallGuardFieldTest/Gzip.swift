import CZlib

/// A gzip file that could not be inflated, and why.
public struct GzipError: Error, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// gzip through the system's zlib. A file may hold several members (RFC 1952; `gzip -dc`
/// reads them as one stream). The bridge's recordings are one stream synced at every flush:
/// a file cut short by a power cut or `kill -9` reads up to its last whole line.
public enum Gzip {
    /// Files this large once inflated are refused: a day of recording is about 120 MB, a Pi
    /// has 1 to 8 GB, and a 2 MB file can inflate to 2 GB.
    public static let inflatedLimit = 256 << 20

    /// True when `bytes` begin with gzip's magic number.
    public static func isGzip(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B
    }

    /// One complete gzip member holding `bytes`.
    public static func member(_ bytes: UnsafeRawBufferPointer, level: Int32 = 6) -> [UInt8] {
        var s = z_stream()
        guard fg_deflate_init_gzip(&s, level) == Z_OK else { return [] }
        defer { deflateEnd(&s) }
        // Header and trailer: 18 bytes; deflateBound covers the worst case of the data.
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&s, uLong(bytes.count))) + 32)
        var status: Int32 = Z_OK
        out.withUnsafeMutableBytes { o in
            s.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
            s.avail_in = uInt(bytes.count)
            s.next_out = o.baseAddress!.assumingMemoryBound(to: Bytef.self)
            s.avail_out = uInt(o.count)
            status = deflate(&s, Z_FINISH)
        }
        guard status == Z_STREAM_END else { return [] }
        out.removeLast(out.count - Int(s.total_out))
        return out
    }

    /// Every member of a gzip file inflated, one after another. A last member cut short (its
    /// writer stopped mid-write) gives the whole lines it holds and `truncated` true; a damaged
    /// member, or more than `limit` bytes, is an error.
    public static func inflate(_ bytes: UnsafeRawBufferPointer, limit: Int = inflatedLimit) throws(GzipError) -> (bytes: [UInt8], truncated: Bool) {
        var out: [UInt8] = []
        out.reserveCapacity(min(bytes.count * 4, limit))
        let truncated: Bool
        do {
            truncated = try inflate(bytes, limit: limit) { out.append(contentsOf: $0) }
        } catch let error as GzipError {
            throw error
        } catch {
            throw GzipError(reason: "\(error)")
        }
        if truncated {
            if let lastNewline = out.lastIndex(of: 0x0A) { out.removeSubrange((lastNewline + 1)...) } else { out.removeAll() }
        }
        return (out, truncated)
    }

    /// Inflates `bytes` piece by piece (64 KiB at a time) into `consume`, never holding the
    /// inflated whole: a reader that parses as it goes needs no more memory than what it keeps.
    /// Returns whether the last member was cut short (its last piece may end mid-line). More
    /// than `limit` inflated bytes is a ``GzipError``; `consume`'s errors pass through.
    public static func inflate(_ bytes: UnsafeRawBufferPointer, limit: Int = inflatedLimit,
                               into consume: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var offset = 0, total = 0
        while offset < bytes.count {
            // Padding after the last member (some tools write zeros): ignored, as gzip(1) does.
            if !isGzip(UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
                if bytes[offset...].allSatisfy({ $0 == 0 }) { break }
                throw GzipError(reason: "not gzip data at byte \(offset)")
            }
            var s = z_stream()
            guard fg_inflate_init_gzip(&s) == Z_OK else { throw GzipError(reason: "zlib could not start") }
            defer { inflateEnd(&s) }
            s.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
            s.avail_in = uInt(bytes.count - offset)
            var status: Int32 = Z_OK
            repeat {
                try chunk.withUnsafeMutableBytes { c in
                    s.next_out = c.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    s.avail_out = uInt(c.count)
                    status = CZlib.inflate(&s, Z_NO_FLUSH)
                    let produced = c.count - Int(s.avail_out)
                    total += produced
                    if total > limit { throw GzipError(reason: "inflates to more than \(limit >> 20) MiB") }
                    if produced > 0 { try consume(UnsafeRawBufferPointer(rebasing: c[0..<produced])) }
                }
            } while status == Z_OK && (s.avail_in > 0 || s.avail_out == 0)
            switch status {
            case Z_STREAM_END:
                offset += Int(s.total_in)
            case Z_OK, Z_BUF_ERROR:
                return true   // the input ended inside this member
            default:
                let why = s.msg.map { String(cString: $0) } ?? "error \(status)"
                throw GzipError(reason: "damaged gzip data at byte \(offset + Int(s.total_in)): \(why)")
            }
        }
        return false
    }
}
