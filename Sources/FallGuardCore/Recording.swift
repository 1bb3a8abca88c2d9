/// A recorded stream in the project's format: CSV with the header `x_g,y_g,z_g`, or
/// `t_s,x_g,y_g,z_g` where a leading column gives times in seconds, each optionally followed by
/// a gyroscope's angular velocity `gx_dps,gy_dps,gz_dps` (degrees per second about the same
/// axes): `t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps`. Without times, rows are 40 Hz apart starting
/// at 0. Lines after the header that begin with `#` are notes (the bridge's recordings carry a
/// wall-clock anchor so); they are skipped.
public struct Recording: Sendable, Equatable {
    public var samples: [AccelerationSample]
    /// True when the file carried its own `t_s` column.
    public var hasTimes: Bool
    /// True when the file carried the gyroscope's columns (every sample has its `gyro`).
    public var hasGyro: Bool

    public init(samples: [AccelerationSample], hasTimes: Bool, hasGyro: Bool = false) {
        (self.samples, self.hasTimes, self.hasGyro) = (samples, hasTimes, hasGyro)
    }

    /// Seconds covered: from the first sample to one period past the last.
    public var duration: Double {
        guard let first = samples.first, let last = samples.last else { return 0 }
        return last.time - first.time + 1 / detectorRate
    }

    /// Times a recording may carry, in seconds (an origin anywhere in a few decades).
    public static let timeLimit = 1e9
    /// The shortest step between two timed rows: 10 kHz, beyond any wearable accelerometer.
    public static let minimumStep = 1e-4

    /// Why `sample` cannot follow `previous` in a recording, or nil: a reading beyond
    /// ±``AccelerationSample/physicalLimit`` g, a time out of ±``timeLimit``, or one that does
    /// not come at least ``minimumStep`` after the previous.
    static func problem(with sample: AccelerationSample, after previous: AccelerationSample?) -> String? {
        if let g = sample.gyro, !g.isPhysical {
            return "\(g.x),\(g.y),\(g.z) °/s is beyond any gyroscope's range (±\(Int(AngularVelocity.physicalLimit)) °/s)"
        }
        guard sample.isPhysical else {
            return "\(sample.x),\(sample.y),\(sample.z) g is beyond any accelerometer's range (±\(Int(AccelerationSample.physicalLimit)) g)"
        }
        guard abs(sample.time) <= timeLimit else { return "time \(sample.time) s is outside ±\(timeLimit) s" }
        if let previous, !(sample.time - previous.time >= minimumStep) {
            return sample.time > previous.time
                ? "time \(sample.time) s comes less than \(minimumStep) s after \(previous.time) s (faster than 10 kHz)"
                : "time \(sample.time) s does not come after \(previous.time) s"
        }
        return nil
    }

    public static let header = "x_g,y_g,z_g"
    public static let timedHeader = "t_s,x_g,y_g,z_g"
    /// The gyroscope's columns, after the acceleration's.
    public static let gyroColumns = "gx_dps,gy_dps,gz_dps"
    public static let sixAxisHeader = timedHeader + "," + gyroColumns

    /// The header of a timed recording of samples like `s`: with the gyroscope's columns when
    /// it has an angular velocity.
    public static func timedHeader(for s: AccelerationSample?) -> String {
        s?.gyro == nil ? timedHeader : sixAxisHeader
    }

    /// Angular velocity to 0.01 °/s (the datasets' resolution; the MPU6050 steps by 0.0076 °/s
    /// at ±250 °/s, by 0.061 °/s at ±2000 °/s).
    public static let gyroDigits = 2

    /// One data row of a timed recording (`t_s,x_g,y_g,z_g`, then `gx_dps,gy_dps,gz_dps` when
    /// the sample has an angular velocity), without the newline: times to 0.1 ms, acceleration
    /// to `valueDigits` decimals of a g (default 4: 0.1 mg), angular velocity to 0.01 °/s.
    public static func row(_ s: AccelerationSample, valueDigits: Int = 4) -> String {
        var bytes: [UInt8] = []
        appendRow(s, valueDigits: valueDigits, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``row(_:valueDigits:)`` appended to `bytes` (with no newline), without making a String.
    public static func appendRow(_ s: AccelerationSample, valueDigits: Int = 4, to bytes: inout [UInt8]) {
        appendFixedDecimal(s.time, digits: 4, to: &bytes)
        appendColumns(s.x, s.y, s.z, digits: valueDigits, to: &bytes)
        if let g = s.gyro { appendColumns(g.x, g.y, g.z, digits: gyroDigits, to: &bytes) }
    }

    /// `,a,b,c` with `digits` decimals each.
    private static func appendColumns(_ a: Double, _ b: Double, _ c: Double, digits: Int, to bytes: inout [UInt8]) {
        bytes.append(0x2C)
        appendFixedDecimal(a, digits: digits, to: &bytes)
        bytes.append(0x2C)
        appendFixedDecimal(b, digits: digits, to: &bytes)
        bytes.append(0x2C)
        appendFixedDecimal(c, digits: digits, to: &bytes)
    }
}

/// Why a recording could not be read: the line (1-based) and what is wrong with it.
public struct RecordingFormatError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) { (self.line, self.reason) = (line, reason) }

    public var description: String { "line \(line): \(reason)" }
}

public enum RecordingParser {
    /// Parses a whole recording from its bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maximumRows: Int = Int.max) throws(RecordingFormatError) -> Recording {
        var stream = Stream(maximumRows: maximumRows, expectedBytes: bytes.count)
        try stream.feed(bytes)
        return try stream.finish()
    }

    /// A recording parsed as its bytes arrive (an inflating gzip file, a file read in pieces):
    /// only the samples and one unfinished line are kept, never the whole text. More than
    /// `maximumRows` samples, or a line longer than ``longestLine``, is an error.
    public struct Stream {
        public let maximumRows: Int
        /// No row of a recording comes near it (four numbers and three commas).
        public static let longestLine = 4096
        private var carry: [UInt8] = []
        private var hasTimes: Bool?
        private var hasGyro = false
        private var samples: [AccelerationSample] = []
        private var lineNumber = 1
        private var values: (Double, Double, Double, Double, Double, Double, Double) = (0, 0, 0, 0, 0, 0, 0)

        /// `expectedBytes`: the text's length when known (room for its samples is made at once).
        public init(maximumRows: Int = Int.max, expectedBytes: Int = 0) {
            self.maximumRows = maximumRows
            samples.reserveCapacity(min(expectedBytes / 20, maximumRows, 1 << 22))
        }

        /// Samples parsed so far.
        public var rows: Int { samples.count }

        /// The next bytes: every whole line among them is parsed, the rest waits for more.
        public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(RecordingFormatError) {
            guard !bytes.isEmpty else { return }
            guard let lastNewline = bytes.lastIndex(of: 0x0A) else {
                carry.append(contentsOf: bytes)
                try checkCarry()
                return
            }
            let whole = UnsafeRawBufferPointer(rebasing: bytes[...lastNewline])
            if carry.isEmpty {
                try parseLines(whole)
            } else {
                var joined = carry
                carry.removeAll(keepingCapacity: true)
                joined.append(contentsOf: whole)
                try parseLines(copied: joined)
            }
            carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[(lastNewline + 1)...]))
            try checkCarry()
        }

        /// The recording: the last line (without its newline) parsed, unless `droppingPartialLine`
        /// (a file cut short mid-write keeps its whole lines only).
        public mutating func finish(droppingPartialLine: Bool = false) throws(RecordingFormatError) -> Recording {
            if !carry.isEmpty && !droppingPartialLine {
                let rest = carry
                carry = []
                try parseLines(copied: rest)
            }
            guard let hasTimes else {   // nothing, or a header cut short
                throw RecordingFormatError(line: 1, reason: "empty file: expected the header '\(Recording.header)'")
            }
            if samples.isEmpty {
                throw RecordingFormatError(line: lineNumber, reason: "no samples after the header")
            }
            return Recording(samples: samples, hasTimes: hasTimes, hasGyro: hasGyro)
        }

        private func checkCarry() throws(RecordingFormatError) {
            if carry.count > Self.longestLine {
                throw RecordingFormatError(line: lineNumber + (hasTimes == nil ? 0 : 1), reason: "a line longer than \(Self.longestLine) bytes: not a recording")
            }
        }

        private mutating func parseLines(copied bytes: [UInt8]) throws(RecordingFormatError) {
            let result = bytes.withUnsafeBytes { b in Result { () throws(RecordingFormatError) in try parseLines(b) } }
            try result.get()
        }

        private mutating func parseLines(_ bytes: UnsafeRawBufferPointer) throws(RecordingFormatError) {
            var p = Cursor(bytes: bytes)
            if hasTimes == nil {
                let header = p.line()
                switch header {
                case Recording.header: (hasTimes, hasGyro) = (false, false)
                case Recording.timedHeader: (hasTimes, hasGyro) = (true, false)
                case Recording.header + "," + Recording.gyroColumns: (hasTimes, hasGyro) = (false, true)
                case Recording.sixAxisHeader: (hasTimes, hasGyro) = (true, true)
                default:
                    throw RecordingFormatError(
                        line: 1,
                        reason: "header is '\(header.prefix(80))', expected '\(Recording.header)' or '\(Recording.timedHeader)', "
                            + "either followed by ',\(Recording.gyroColumns)'")
                }
            }
            let hasTimes = self.hasTimes!
            let columns = (hasTimes ? ["t_s", "x_g", "y_g", "z_g"] : ["x_g", "y_g", "z_g"]) + (hasGyro ? ["gx_dps", "gy_dps", "gz_dps"] : [])
            while !p.atEnd {
                lineNumber += 1
                if p.skipBlankLine() || p.skipComment() { continue }
                for c in 0..<columns.count {
                    let v: Double
                    switch p.number() {
                    case .value(let x): v = x
                    case .missing:
                        throw RecordingFormatError(
                            line: lineNumber,
                            reason: "column \(columns[c]) is empty or missing (expected \(columns.count) numbers: \(columns.joined(separator: ",")))")
                    case .invalid(let text):
                        throw RecordingFormatError(line: lineNumber, reason: "'\(text)' in column \(columns[c]) is not a number")
                    }
                    switch c {
                    case 0: values.0 = v
                    case 1: values.1 = v
                    case 2: values.2 = v
                    case 3: values.3 = v
                    case 4: values.4 = v
                    case 5: values.5 = v
                    default: values.6 = v
                    }
                    let last = c == columns.count - 1
                    if !p.separator(last: last) {
                        if last {
                            throw RecordingFormatError(line: lineNumber, reason: "more than \(columns.count) columns")
                        }
                        throw RecordingFormatError(line: lineNumber, reason: "expected \(columns.count) numbers (\(columns.joined(separator: ","))), found \(c + 1)")
                    }
                }
                var s = hasTimes ? AccelerationSample(time: values.0, x: values.1, y: values.2, z: values.3)
                    : AccelerationSample(time: Double(samples.count) / detectorRate, x: values.0, y: values.1, z: values.2)
                if hasGyro {
                    s.gyro = hasTimes ? AngularVelocity(x: values.4, y: values.5, z: values.6)
                        : AngularVelocity(x: values.3, y: values.4, z: values.5)
                }
                if let why = Recording.problem(with: s, after: hasTimes ? samples.last : nil) {
                    throw RecordingFormatError(line: lineNumber, reason: why)
                }
                guard samples.count < maximumRows else {
                    throw RecordingFormatError(line: lineNumber, reason: "more than \(maximumRows) rows: larger than any recording read here")
                }
                samples.append(s)
            }
        }
    }

    enum NumberResult {
        case value(Double)
        case missing
        case invalid(String)
    }

    /// A byte cursor specialised for the format: fast enough for ~10⁷ numbers per second.
    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var i = 0

        var atEnd: Bool { i >= bytes.count }

        mutating func line() -> String {
            let start = i
            while i < bytes.count, bytes[i] != 0x0A { i += 1 }
            var end = i
            if i < bytes.count { i += 1 }
            while end > start, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x20 { end -= 1 }
            var s = start
            if end - s >= 3, bytes[s] == 0xEF, bytes[s + 1] == 0xBB, bytes[s + 2] == 0xBF { s += 3 }  // UTF-8 BOM
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[s..<end]), as: UTF8.self)
        }

        /// Skips a line holding nothing but spaces; true if it did.
        mutating func skipBlankLine() -> Bool {
            var j = i
            while j < bytes.count, bytes[j] == 0x20 || bytes[j] == 0x0D || bytes[j] == 0x09 { j += 1 }
            if j >= bytes.count { i = j; return true }
            if bytes[j] == 0x0A { i = j + 1; return true }
            return false
        }

        /// Skips a line that begins with `#` (a note such as the wall-clock anchor); true if it did.
        mutating func skipComment() -> Bool {
            guard i < bytes.count, bytes[i] == 0x23 else { return false }
            while i < bytes.count, bytes[i] != 0x0A { i += 1 }
            if i < bytes.count { i += 1 }
            return true
        }

        /// After a value: a comma (not last) or end of line (last). False if neither.
        mutating func separator(last: Bool) -> Bool {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
            if last {
                if i < bytes.count, bytes[i] == 0x0D { i += 1 }
                if i >= bytes.count { return true }
                if bytes[i] == 0x0A { i += 1; return true }
                return false
            }
            if i < bytes.count, bytes[i] == 0x2C { i += 1; return true }
            return false
        }

        mutating func number() -> NumberResult {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
            let start = i
            var negative = false
            if i < bytes.count, bytes[i] == 0x2D || bytes[i] == 0x2B {
                negative = bytes[i] == 0x2D
                i += 1
            }
            var mantissa: UInt64 = 0
            var digits = 0, dropped = 0, fraction = 0
            while i < bytes.count, bytes[i] &- 0x30 < 10 {
                if digits < 18 { mantissa = mantissa * 10 + UInt64(bytes[i] &- 0x30); digits += 1 } else { dropped += 1 }
                i += 1
            }
            let intDigits = digits + dropped
            var fracDigits = 0
            if i < bytes.count, bytes[i] == 0x2E {
                i += 1
                while i < bytes.count, bytes[i] &- 0x30 < 10 {
                    if digits < 18 { mantissa = mantissa * 10 + UInt64(bytes[i] &- 0x30); digits += 1; fraction += 1 }
                    fracDigits += 1
                    i += 1
                }
            }
            if intDigits + fracDigits == 0 {
                return restOfField(from: start)
            }
            var exponent = dropped - fraction
            if i < bytes.count, bytes[i] | 0x20 == 0x65 {  // e or E
                i += 1
                var expNegative = false
                if i < bytes.count, bytes[i] == 0x2D || bytes[i] == 0x2B { expNegative = bytes[i] == 0x2D; i += 1 }
                var e = 0, expDigits = 0
                while i < bytes.count, bytes[i] &- 0x30 < 10 {
                    if e < 10_000 { e = e * 10 + Int(bytes[i] &- 0x30) }
                    expDigits += 1
                    i += 1
                }
                if expDigits == 0 { return restOfField(from: start) }
                exponent += expNegative ? -e : e
            }
            // The field must end here.
            if i < bytes.count, !(bytes[i] == 0x2C || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x20 || bytes[i] == 0x09) {
                return restOfField(from: start)
            }
            var v = Double(mantissa)
            if exponent < 0 {
                v = -exponent <= 22 ? v / powersOfTen[-exponent] : v / pow10(-exponent)
            } else if exponent > 0 {
                v = exponent <= 22 ? v * powersOfTen[exponent] : v * pow10(exponent)
            }
            if !v.isFinite { return restOfField(from: start) }
            return .value(negative ? -v : v)
        }

        private mutating func restOfField(from start: Int) -> NumberResult {
            i = start
            while i < bytes.count, bytes[i] != 0x2C, bytes[i] != 0x0A, bytes[i] != 0x0D { i += 1 }
            if i == start { return .missing }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            let trimmed = text.trimmingCharacters(in: " \t")
            return trimmed.isEmpty ? .missing : .invalid(String(trimmed.prefix(40)))
        }
    }

    static let powersOfTen: [Double] = (0...22).map { e in
        var v = 1.0
        for _ in 0..<e { v *= 10 }
        return v
    }

    static func pow10(_ e: Int) -> Double {
        var v = 1.0
        for _ in 0..<min(e, 400) { v *= 10 }
        return v
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        return String(drop(while: { chars.contains($0) }).reversed().drop(while: { chars.contains($0) }).reversed())
    }
}
