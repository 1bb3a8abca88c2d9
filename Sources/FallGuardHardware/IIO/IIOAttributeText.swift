import FallGuardCore

/// The text of an accelerometer's sysfs attributes, as the drivers write it. Pure functions,
/// apart from the device: `fuzz/` feeds them arbitrary bytes.
public enum IIOAttributeText {
    /// `in_accel_scale`: one decimal number (`0.038300`).
    public static func scale(_ text: String) -> Double? { Double(text) }

    /// `sampling_frequency`: its first word as a rate a sensor runs at (``Resampler/rates``), nil
    /// for anything else (a remote iiod may send 0, -1, nan or inf).
    public static func frequency(_ text: String) -> Double? {
        Double(text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first ?? "").flatMap { Resampler.rates.contains($0) ? $0 : nil }
    }

    /// `*_available` lists: numbers separated by spaces or newlines; what is not a number is left out.
    public static func numbers(_ text: String) -> [Double] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
    }

    /// `in_accel_mount_matrix`: "x1, y1, z1; x2, y2, z2; x3, y3, z3"; nil unless three rows of
    /// three numbers within ±1 (a rotation's entries: nan or 1e300 would make every sample a fault).
    public static func mountMatrix(_ text: String) -> [[Double]]? {
        let rows = text.split(separator: ";").map { $0.split(separator: ",").compactMap { Double($0.trimmingSpaces) } }
        guard rows.count == 3, rows.allSatisfy({ $0.count == 3 && $0.allSatisfy { abs($0) <= 1 } }) else { return nil }
        return rows
    }

    /// A `_raw` attribute's bytes as read: an optional `-`, 1 to 18 digits, an optional newline.
    /// 0, or the errno: ENODEV when empty (a removed device), EINVAL for anything else.
    @inline(__always)
    public static func raw(_ b: UnsafeRawBufferPointer, _ value: inout Int64) -> Int32 {
        let n = b.count
        if n == 0 { return ENODEV }
        var v: Int64 = 0, negative = false, digits = 0, i = 0
        if b[0] == UInt8(ascii: "-") { negative = true; i = 1 }
        while i < n, b[i] >= 48, b[i] <= 57 {
            // Past 18 digits an Int64 could overflow: the digits are counted, and refused below.
            if digits < 18 { v = v * 10 + Int64(b[i] - 48) }
            i += 1
            digits += 1
        }
        guard digits > 0, digits < 19, i == n || b[i] == 10 else { return EINVAL }
        value = negative ? -v : v
        return 0
    }
}

extension Substring {
    var trimmingSpaces: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}

#if canImport(Glibc)
import Glibc
#endif
