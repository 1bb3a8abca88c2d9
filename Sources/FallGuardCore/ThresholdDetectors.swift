/// The original Arduino device's rule: any single axis beyond its threshold.
public struct PerAxisDetector: FallDetector {
    public static let name = "per-axis"
    public static let parameters = [
        DetectorParameter("threshold-x", 2.0, 1.0...16.0, "g", "alarm when |x| exceeds this"),
        DetectorParameter("threshold-y", 2.0, 1.0...16.0, "g", "alarm when |y| exceeds this"),
        DetectorParameter("threshold-z", 2.0, 1.0...16.0, "g", "alarm when |z| exceeds this"),
        DetectorParameter("refractory", 10.0, 0.0...120.0, "s", "quiet time after a detection, so one fall is one event"),
    ]

    private let tx: Double, ty: Double, tz: Double, refractory: Double
    private var quietUntil = -Double.infinity

    public init(settings: DetectorSettings = DetectorSettings(parameters: parameters)) {
        tx = settings["threshold-x"]
        ty = settings["threshold-y"]
        tz = settings["threshold-z"]
        refractory = settings["refractory"]
    }

    public mutating func process(_ s: AccelerationSample) -> FallSuspected? {
        guard s.time >= quietUntil else { return nil }
        let ax = abs(s.x), ay = abs(s.y), az = abs(s.z)
        guard ax > tx || ay > ty || az > tz else { return nil }
        quietUntil = s.time + refractory
        var phases: [String] = []
        if ax > tx { phases.append("x-threshold") }
        if ay > ty { phases.append("y-threshold") }
        if az > tz { phases.append("z-threshold") }
        return FallSuspected(
            detector: Self.name, impactTime: s.time, decisionTime: s.time, peak: max(ax, ay, az),
            phases: phases,
            features: [DetectionFeature("x", s.x, "g"), DetectionFeature("y", s.y, "g"), DetectionFeature("z", s.z, "g")])
    }

    public mutating func reset() { quietUntil = -.infinity }
}

/// The iOS thesis's rule: |x| + |y| + |z| above a threshold (4 g) at 40 Hz.
public struct SumAbsDetector: FallDetector {
    public static let name = "sum-abs"
    public static let parameters = [
        DetectorParameter("threshold", 4.0, 1.0...48.0, "g", "alarm when |x|+|y|+|z| exceeds this"),
        DetectorParameter("refractory", 10.0, 0.0...120.0, "s", "quiet time after a detection, so one fall is one event"),
    ]

    private let threshold: Double, refractory: Double
    private var quietUntil = -Double.infinity

    public init(settings: DetectorSettings = DetectorSettings(parameters: parameters)) {
        threshold = settings["threshold"]
        refractory = settings["refractory"]
    }

    public mutating func process(_ s: AccelerationSample) -> FallSuspected? {
        guard s.time >= quietUntil else { return nil }
        let sum = s.sumOfAbsoluteAxes
        guard sum > threshold else { return nil }
        quietUntil = s.time + refractory
        return FallSuspected(
            detector: Self.name, impactTime: s.time, decisionTime: s.time, peak: sum,
            phases: ["impact"], features: [DetectionFeature("sum-abs", sum, "g")])
    }

    public mutating func reset() { quietUntil = -.infinity }
}
