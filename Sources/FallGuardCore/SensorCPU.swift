/// Which CPU the sensor's two threads (capture and consumer) share.
///
/// The capture thread wakes once per sample and rings the consumer; when both sit on one CPU
/// that second wake-up is a local switch instead of an inter-processor interrupt (`fallguard
/// watch` on the emulated MPU6050 at 40 Hz, 150 s on a 2-core VM: 0.423 % of a core free,
/// 0.359 % pinned). Config key `sensor.cpu`: `last` (default: the highest-numbered online CPU),
/// `any` (no pinning), or a CPU number.
public enum SensorCPU: Sendable, Equatable, Codable, CustomStringConvertible {
    case any
    case last
    case number(Int)

    public var description: String {
        switch self {
        case .any: "any"
        case .last: "last"
        case let .number(n): String(n)
        }
    }

    /// The CPU for `online` CPUs; nil when the threads may run anywhere.
    public func resolved(online: Int) -> Int? {
        switch self {
        case .any: nil
        case .last: max(0, online - 1)
        case let .number(n): n
        }
    }

    /// `last`, `any` or a CPU number, as written in the configuration or on the command line.
    public init?(_ word: String) {
        switch word {
        case "any": self = .any
        case "last": self = .last
        default:
            guard let n = Int(word) else { return nil }
            self = .number(n)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) {
            self = .number(n)
            return
        }
        let word = try c.decode(String.self)
        guard let cpu = SensorCPU(word) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "'\(word)' is not a CPU: use last, any or a CPU number")
        }
        self = cpu
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .any: try c.encode("any")
        case .last: try c.encode("last")
        case let .number(n): try c.encode(n)
        }
    }
}
