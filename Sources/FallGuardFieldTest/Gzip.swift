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
    /// Files this large once inflated are refused (a day of recording is about 120 MB).
    public static let inflatedLimit = 1 << 30

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
    /// member, or more than ``inflatedLimit`` bytes, is an error.
    public static func inflate(_ bytes: UnsafeRawBufferPointer) throws(GzipError) -> (bytes: [UInt8], truncated: Bool) {
        var out: [UInt8] = []
        out.reserveCapacity(min(bytes.count * 4, inflatedLimit))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var offset = 0
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
                let produced: Int = chunk.withUnsafeMutableBytes { c in
                    s.next_out = c.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    s.avail_out = uInt(c.count)
                    status = CZlib.inflate(&s, Z_NO_FLUSH)
                    return c.count - Int(s.avail_out)
                }
                out.append(contentsOf: chunk[0..<produced])
                if out.count > inflatedLimit {
                    throw GzipError(reason: "inflates to more than \(inflatedLimit >> 20) MiB")
                }
            } while status == Z_OK && (s.avail_in > 0 || s.avail_out == 0)
            switch status {
            case Z_STREAM_END:
                offset += Int(s.total_in)
            case Z_OK, Z_BUF_ERROR:
                // The input ended inside this member: keep its whole lines.
                if let lastNewline = out.lastIndex(of: 0x0A) { out.removeSubrange((lastNewline + 1)...) } else { out.removeAll() }
                return (out, true)
            default:
                let why = s.msg.map { String(cString: $0) } ?? "error \(status)"
                throw GzipError(reason: "damaged gzip data at byte \(offset + Int(s.total_in)): \(why)")
            }
        }
        return (out, false)
    }
}
