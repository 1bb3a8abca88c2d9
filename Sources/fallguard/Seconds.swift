import ArgumentParser

/// A time on the command line (`--duration 60`): a finite number of seconds from 0 to a year.
/// Anything else (`nan`, `inf`, `-1`, `1e300`) is a usage error (exit 64) naming the option,
/// never a trap when the seconds become nanoseconds.
struct Seconds: ExpressibleByArgument, Sendable {
    static let range: ClosedRange<Double> = 0...(366 * 86_400)

    let value: Double

    init?(argument: String) {
        guard let v = Double(argument), v.isFinite, Self.range.contains(v) else { return nil }
        value = v
    }

    init(_ value: Double) { self.value = value }

    var nanoseconds: Int64 { Int64(value * 1e9) }

    var defaultValueDescription: String { value == value.rounded() ? String(Int(value)) : String(value) }
}

/// A number from the command line outside `range` (nan included) is a usage error (exit 64)
/// naming the option, before it can reach a conversion that would trap.
func requireOption<T: Comparable>(_ name: String, _ value: T, in range: ClosedRange<T>) throws {
    guard range.contains(value) else {
        throw ValidationError("--\(name): \(value) is outside \(range.lowerBound)...\(range.upperBound)")
    }
}
