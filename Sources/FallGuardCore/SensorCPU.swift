/// Which CPU the sensor thread runs on: the one thread that captures (inside the source's
/// `waitForData`) and runs the detector.
///
/// Each delivery (a buffered batch, or one polled sample) wakes that thread once, from the
/// driver's interrupt handler: a local switch when the thread runs on the CPU of the sensor's
/// interrupt, an inter-processor interrupt when it does not. A Raspberry Pi delivers device
/// interrupts to CPU 0 unless they are moved, hence the default, 0. Measured with
/// `fallguard watch` on the emulated MPU6050 at 40 Hz, its writer on CPU 0, on a 2-core VM,
/// when capture still had a thread of its own: 0.29 % of a core on CPU 0, 0.42 % on CPU 1.
/// A CPU number, `last` (the highest-numbered online CPU: away from the interrupts) or `any`
/// (no pinning).
public enum SensorCPU: Sendable, Equatable, CustomStringConvertible {
    case any
    case last
    case number(Int)

    /// CPU 0: where a Raspberry Pi takes the sensor's interrupt (see above).
    public static let `default` = SensorCPU.number(0)

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

    /// The choices that are words, not numbers (the configuration's word list, the options' help).
    public static let words: [SensorCPU] = [.last, .any]

    /// `last`, `any` or a CPU number, as written in the configuration or on the command line.
    public init?(_ word: String) {
        if let named = Self.words.first(where: { $0.description == word }) {
            self = named
        } else if let n = Int(word) {
            self = .number(n)
        } else {
            return nil
        }
    }
}
