import FallGuardConfigKeys
import FallGuardCore
import Foundation

/// `sensor:` — the accelerometer, or a recording replayed in its place.
public struct SensorSection: KeyedSection, Codable, Equatable {
    /// How samples are taken from the IIO device.
    public enum Mode: String, CaseIterable, Sendable {
        /// The driver's buffer when it has one, else polling the `_raw` attributes.
        case auto
        /// The driver's buffer only (fails on drivers without one).
        case buffered
        /// The three `in_accel_*_raw` attributes on a timer.
        case polled
    }

    /// Context URIs libiio understands.
    public static let uriSchemes = ["local:", "ip:", "usb:", "serial:", "xml:"]
    public static let rangeGRange: ClosedRange<Double> = 2...16

    /// libiio context (key `uri`, default `local:`; `ip:HOST` for a sensor behind iiod). A bare
    /// scheme such as `local` is read as `local:` (YAML takes an unquoted `local:` at the end of
    /// a line for a key, so the file may say `uri: local` or `uri: "local:"`).
    public var uri: String = "local:"
    /// IIO device name or id (key `device`, default none: adxl345, then mpu6050, then the first
    /// device with accel_x/y/z channels).
    public var device: String?
    /// Key `mode`, default `auto`.
    public var mode: Mode = .auto
    /// Measuring range to ask for, in g, where the driver offers several (key `range-g`,
    /// default 16; impacts exceed 4 g).
    public var rangeG: Double = 16
    /// The board's orientation, three rows of three, overriding the driver's
    /// `in_accel_mount_matrix` (key `mount-matrix`, default none).
    public var mountMatrix: [[Double]]?
    /// A recording (CSV, `x_g,y_g,z_g` at 40 Hz) streamed in real time instead of the
    /// accelerometer: the demo and field tests (key `replay`, default none).
    public var replay: String?
    /// The CPU of the sensor thread, which captures and detects (key `cpu`: a CPU number, default 0,
    /// where a Raspberry Pi takes the sensor's interrupt; `last`; or `any` for no pinning).
    public var cpu: SensorCPU = .default

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.custom("uri", \.uri) { c, k in
             try c.decodeIfPresent(String.self, forKey: k).map { uriSchemes.contains($0 + ":") ? $0 + ":" : $0 }
         },
         .optional("device", \.device), .word("mode", \.mode, RawWords<Mode>.self),
         .value("range-g", \.rangeG, in: rangeGRange, unit: " g"), .optional("mount-matrix", \.mountMatrix),
         .optional("replay", \.replay), .section("cpu", \.cpu)]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        if !Self.uriSchemes.contains(where: { uri.hasPrefix($0) }) {
            out.append(ConfigProblem(Self.at(path, \.uri), "'\(uri)' is not a libiio context URI (\(Self.uriSchemes.joined(separator: ", ")))"))
        }
        if device?.isEmpty == true { out.append(ConfigProblem(Self.at(path, \.device), "is empty; leave it out to pick the accelerometer automatically")) }
        if let m = mountMatrix, let why = Self.matrixProblem(m) { out.append(ConfigProblem(Self.at(path, \.mountMatrix), why)) }
        if case let .number(n) = cpu, n < 0 || n >= 1024 {
            out.append(ConfigProblem(Self.at(path, \.cpu), "\(n) is not a CPU number (last, any, or 0 and up)"))
        }
        if let r = replay, !FileManager.default.isReadableFile(atPath: r) {
            out.append(ConfigProblem(Self.at(path, \.replay), "cannot read the recording \(r)"))
        }
        return out
    }

    /// A mount matrix must be a rotation (or reflection): three rows of three, determinant ±1.
    static func matrixProblem(_ m: [[Double]]) -> String? {
        guard m.count == 3, m.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isFinite) }) else {
            return "must be three rows of three numbers, e.g. [[1, 0, 0], [0, 1, 0], [0, 0, 1]]"
        }
        let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        return abs(abs(det) - 1) <= 0.05 ? nil : "is not a rotation (determinant \(det), expected ±1)"
    }
}

/// `sensor.cpu`: a CPU number, `last` or `any`.
extension SensorCPU: ConfigSection {
    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) {
            self = .number(n)
            return
        }
        let word = try c.decode(String.self)
        guard let cpu = SensorCPU(word) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: SensorCPUWords.mismatch(word, orElse: "a CPU number"))
        }
        self = cpu
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if case let .number(n) = self { try c.encode(n) } else { try c.encode(description) }
    }

    /// Checked by ``SensorSection``, which knows the range.
    public func problems(at path: [String]) -> [ConfigProblem] { [] }
}

/// The words of `sensor.cpu` (besides a CPU number).
enum SensorCPUWords: WordList {
    static var words: [(word: String, value: SensorCPU)] { SensorCPU.words.map { ($0.description, $0) } }
}
