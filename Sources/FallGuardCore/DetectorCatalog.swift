/// The detectors a user can choose by name, with their tunable settings.
public enum DetectorCatalog {
    /// The default: impact, posture change and stillness (see ``MultiphaseDetector``).
    public static let defaultName = MultiphaseDetector.name
    public static let names = [MultiphaseDetector.name, SumAbsDetector.name, PerAxisDetector.name, SixAxisDetector.name]

    public static func parameters(for name: String) throws(DetectorSettingError) -> [DetectorParameter] {
        switch name {
        case MultiphaseDetector.name: return MultiphaseDetector.parameters
        case SixAxisDetector.name: return SixAxisDetector.parameters
        case SumAbsDetector.name: return SumAbsDetector.parameters
        case PerAxisDetector.name: return PerAxisDetector.parameters
        default: throw .unknownDetector(name, known: names)
        }
    }

    /// One line about each detector, for `--help` and `fallguard detectors`.
    public static func summary(for name: String) -> String {
        switch name {
        case MultiphaseDetector.name: return MultiphaseDetector.summary
        case SixAxisDetector.name: return SixAxisDetector.summary
        case SumAbsDetector.name: return "|x|+|y|+|z| above 4 g at 40 Hz, as in the 2016 iOS thesis"
        case PerAxisDetector.name: return "any axis beyond 2 g, as on the original Arduino device"
        default: return ""
        }
    }
}

/// A detector chosen by name with its settings: what `--detector` and `--set` describe.
public struct DetectorConfiguration: Sendable, Equatable {
    public let name: String
    public var settings: DetectorSettings
    /// Feed the detector without the gyroscope's readings (`--accelerometer-only`): a six-axis
    /// recording judged as an accelerometer-only sensor (the ADXL345) would give it.
    public var accelerometerOnly = false

    /// - Parameter assignments: `key=value` strings, applied in order over the defaults.
    public init(name: String = DetectorCatalog.defaultName, assignments: [String] = []) throws(DetectorSettingError) {
        self.name = name
        settings = DetectorSettings(parameters: try DetectorCatalog.parameters(for: name))
        try settings.apply(assignments, detector: name)
    }

    /// - Parameter values: settings by key (a configuration file's `detector.settings`), each
    ///   checked against its parameter's range; no text round trip.
    public init(name: String, values: [String: Double]) throws(DetectorSettingError) {
        self.name = name
        settings = DetectorSettings(parameters: try DetectorCatalog.parameters(for: name))
        for key in values.keys.sorted() { try settings.set(key, values[key]!, detector: name) }
    }

    public func makeDetector() -> any FallDetector {
        accelerometerOnly ? AccelerometerOnlyDetector(base: makeNamedDetector()) : makeNamedDetector()
    }

    private func makeNamedDetector() -> any FallDetector {
        switch name {
        case SixAxisDetector.name: return SixAxisDetector(settings: settings)
        case SumAbsDetector.name: return SumAbsDetector(settings: settings)
        case PerAxisDetector.name: return PerAxisDetector(settings: settings)
        default: return MultiphaseDetector(settings: settings)
        }
    }

    /// `multiphase` or `multiphase (impact=3.5, …)`.
    public var label: String {
        let c = settings.changed
        let named = c.isEmpty ? name : "\(name) (\(c.joined(separator: ", ")))"
        return accelerometerOnly ? named + ", accelerometer only" : named
    }
}

/// A detector fed each sample without its angular velocity.
public struct AccelerometerOnlyDetector: FallDetector {
    public var base: any FallDetector

    public init(base: any FallDetector) { self.base = base }

    public mutating func process(_ sample: AccelerationSample) -> FallSuspected? { base.process(sample.accelerometerOnly) }
    public mutating func reset() { base.reset() }
    public var openDecision: OpenDecision? { base.openDecision }
    public mutating func learnedUpright(_ gravity: (x: Double, y: Double, z: Double)?) { base.learnedUpright(gravity) }
    public var readsGyroscope: Bool { false }
}
