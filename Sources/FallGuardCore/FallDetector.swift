/// A streaming fall detector: fed one 40 Hz sample at a time, O(1) work per sample and no
/// allocation on the sample path (a detection, which is rare, may allocate).
public protocol FallDetector: Sendable {
    /// Feeds one sample; returns a detection when this sample completes one.
    mutating func process(_ sample: AccelerationSample) -> FallSuspected?
    /// Forgets all history, e.g. after a gap in the stream or a sensor fault.
    mutating func reset()
    /// A decision the detector has begun but not finished: a candidate impact it is still
    /// watching. When a recording ends with one open and nothing detected, the recording is too
    /// short to judge. Nil when nothing is pending (the default for detectors that decide at once).
    var openDecision: OpenDecision? { get }
    /// The wearer's upright trunk, gravity in the sensor's axes while walking (``UprightLearner``),
    /// once known; nil when it is not (or no longer: the device lay unworn and may be clipped
    /// on another way round). Detectors that do not use it ignore it (the default).
    mutating func learnedUpright(_ gravity: (x: Double, y: Double, z: Double)?)
    /// False when the detector is fed the accelerometer alone (an ADXL345, or `--accelerometer-only`
    /// on a six-axis recording): what follows a detection (the countdown's recovery watch) must not
    /// read the recording's gyroscope either. True by default.
    var readsGyroscope: Bool { get }
}

extension FallDetector {
    public var openDecision: OpenDecision? { nil }
    public mutating func learnedUpright(_ gravity: (x: Double, y: Double, z: Double)?) {}
    public var readsGyroscope: Bool { true }
}

/// A candidate impact whose decision is still due, e.g. during the long look after a soft impact.
public struct OpenDecision: Sendable, Equatable {
    /// Stream time of the candidate impact (the smoothed peak), in seconds.
    public var impactTime: Double
    /// Stream time at which the decision falls, if no evidence rejects the candidate first.
    public var dueTime: Double
    /// Which rule is waiting: `fast` (the 2.5 s decision) or `long-look`.
    public var rule: String

    public init(impactTime: Double, dueTime: Double, rule: String) {
        (self.impactTime, self.dueTime, self.rule) = (impactTime, dueTime, rule)
    }
}

/// One named measurement behind a detection, e.g. `peak = 5.2 g`.
public struct DetectionFeature: Sendable, Equatable, Codable {
    public var name: String
    public var value: Double
    public var unit: String

    public init(_ name: String, _ value: Double, _ unit: String) { (self.name, self.value, self.unit) = (name, value, unit) }
}

/// A suspected fall, with everything a field tester needs to see why the detector fired.
public struct FallSuspected: Sendable, Equatable, Codable {
    /// The detector's catalogue name (`multiphase`, `sum-abs`, …).
    public var detector: String
    /// Stream time of the impact, in seconds.
    public var impactTime: Double
    /// Stream time of the sample that completed the decision, in seconds.
    public var decisionTime: Double
    /// The largest acceleration around the impact, in g (the detector's own measure).
    public var peak: Double
    /// The phases that fired, in order (e.g. `free-fall`, `impact`, `posture-change`, `stillness`).
    public var phases: [String]
    /// The measurements that decided it.
    public var features: [DetectionFeature]
    /// The gravity vector (in g, summed over the samples 2 to 0.5 s before the impact) the
    /// wearer's posture was measured against, when the detector knows it: the ``RecoveryWatch``
    /// tells from it whether the wearer is up again. Not encoded.
    public var gravityBefore: [Double]?
    /// Offline runs only (``DetectorRunner``): seconds after the impact at which the wearer was
    /// up again within the countdown (a recovered fall); nil when they stayed down. Not encoded.
    public var recoveredAfter: Double?

    private enum CodingKeys: String, CodingKey { case detector, impactTime, decisionTime, peak, phases, features }

    public init(detector: String, impactTime: Double, decisionTime: Double, peak: Double,
                phases: [String], features: [DetectionFeature]) {
        self.detector = detector
        self.impactTime = impactTime
        self.decisionTime = decisionTime
        self.peak = peak
        self.phases = phases
        self.features = features
    }

    /// One line a person can read: `impact 1.23 g …`.
    public var reason: String {
        let fs = features.map { f in
            "\(f.name)=\(formatNumber(f.value))\(f.unit.isEmpty ? "" : " " + f.unit)"
        }
        return "\(phases.joined(separator: " + ")) (\(fs.joined(separator: ", ")))"
    }
}

/// Fixed three-decimal formatting without Foundation; any value, however large, formats.
func formatNumber(_ v: Double) -> String { fixedDecimal(v, digits: 3) }

/// `v` with exactly `digits` (at most 15) decimals, without Foundation. Values too large for
/// that precision (and non-finite ones) come out in Swift's own notation: never a trap.
public func fixedDecimal(_ v: Double, digits: Int) -> String {
    let digits = min(max(digits, 0), 15)
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let scaled = (abs(v) * p).rounded()
    guard scaled < 9e15 else { return "\(v)" }   // also false for NaN
    let n = Int64(scaled)
    let whole = n / Int64(p)
    let frac = String(n % Int64(p))
    let sign = v < 0 && n != 0 ? "-" : ""
    guard digits > 0 else { return "\(sign)\(whole)" }
    return "\(sign)\(whole).\(String(repeating: "0", count: digits - frac.count))\(frac)"
}

/// Appends `v` with exactly `digits` (at most 15) decimals to `bytes` as ASCII, the text
/// ``fixedDecimal(_:digits:)`` gives, without making a String (a recording's hot path).
public func appendFixedDecimal(_ v: Double, digits: Int, to bytes: inout [UInt8]) {
    let digits = min(max(digits, 0), 15)
    var p: Int64 = 1
    for _ in 0..<digits { p *= 10 }
    let scaled = (abs(v) * Double(p)).rounded()
    guard scaled < 9e15 else { bytes.append(contentsOf: fixedDecimal(v, digits: digits).utf8); return }
    let n = Int64(scaled)
    if v < 0 && n != 0 { bytes.append(0x2D) }
    // Digits of n, least significant first, with the point after `digits` of them.
    var tmp: (UInt64, UInt64, UInt64) = (0, 0, 0)   // up to 24 characters
    var count = 0
    withUnsafeMutableBytes(of: &tmp) { buf in
        var m = n
        repeat {
            if count == digits && digits > 0 { buf[count] = 0x2E; count += 1 }
            buf[count] = UInt8(0x30 + m % 10); count += 1
            m /= 10
        } while m > 0 || count <= digits
        for i in stride(from: count - 1, through: 0, by: -1) { bytes.append(buf[i]) }
    }
}

/// A tunable constant of a detector, with its unit, default, allowed range and meaning.
public struct DetectorParameter: Sendable, Equatable {
    public var key: String
    public var defaultValue: Double
    public var range: ClosedRange<Double>
    public var unit: String
    public var help: String

    public init(_ key: String, _ defaultValue: Double, _ range: ClosedRange<Double>, _ unit: String, _ help: String) {
        (self.key, self.defaultValue, self.range, self.unit, self.help) = (key, defaultValue, range, unit, help)
    }
}

/// Values for a detector's parameters, looked up by key; every key has a value.
public struct DetectorSettings: Sendable, Equatable {
    public let parameters: [DetectorParameter]
    public private(set) var values: [String: Double]

    public init(parameters: [DetectorParameter]) {
        self.parameters = parameters
        values = Dictionary(uniqueKeysWithValues: parameters.map { ($0.key, $0.defaultValue) })
    }

    public subscript(key: String) -> Double {
        guard let v = values[key] else { preconditionFailure("no detector parameter '\(key)'") }
        return v
    }

    /// Sets one value, checking the key and the range.
    public mutating func set(_ key: String, _ value: Double, detector: String) throws(DetectorSettingError) {
        guard let p = parameters.first(where: { $0.key == key }) else {
            throw .unknownKey(key: key, detector: detector, known: parameters.map(\.key))
        }
        guard value.isFinite, p.range.contains(value) else {
            throw .outOfRange(key: key, value: value, range: p.range, unit: p.unit)
        }
        values[key] = value
    }

    /// Applies `key=value` assignments in order.
    public mutating func apply(_ assignments: [String], detector: String) throws(DetectorSettingError) {
        for a in assignments {
            guard let eq = a.firstIndex(of: "=") else { throw .malformed(a) }
            let key = a[..<eq].trimmingSpaces()
            let text = a[a.index(after: eq)...].trimmingSpaces()
            guard !key.isEmpty else { throw .malformed(a) }
            guard let v = Double(text) else { throw .notANumber(key: key, text: text) }
            try set(key, v, detector: detector)
        }
    }

    /// `key=value` for every value that differs from its default, in parameter order.
    public var changed: [String] {
        parameters.compactMap { p in values[p.key] == p.defaultValue ? nil : "\(p.key)=\(values[p.key]!)" }
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

public enum DetectorSettingError: Error, Equatable, CustomStringConvertible {
    case unknownDetector(String, known: [String])
    case unknownKey(key: String, detector: String, known: [String])
    case outOfRange(key: String, value: Double, range: ClosedRange<Double>, unit: String)
    case notANumber(key: String, text: String)
    case malformed(String)

    public var description: String {
        switch self {
        case let .unknownDetector(name, known):
            return "unknown detector '\(name)' (known: \(known.joined(separator: ", ")))"
        case let .unknownKey(key, detector, known):
            return "detector '\(detector)' has no setting '\(key)' (settings: \(known.joined(separator: ", ")))"
        case let .outOfRange(key, value, range, unit):
            return "setting '\(key)' = \(value) is outside \(range.lowerBound)...\(range.upperBound) \(unit)"
        case let .notANumber(key, text):
            return "setting '\(key)': '\(text)' is not a number"
        case let .malformed(text):
            return "'\(text)' is not of the form key=value"
        }
    }
}
