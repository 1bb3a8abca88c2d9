/// The multiphase detector whose long look opens on the gyroscope's rotation **alone**, not
/// beside the accelerometer's estimate of it (the shipped ``MultiphaseDetector`` takes either):
/// the comparison of issue 35 (tools/detector-research/FINDINGS.md), kept so that a folder can
/// show what each measure of the turn adds.
///
/// The look opens when the net rotation |Σ ω Δt| over one second, ending from 1 s before to
/// 250 ms after the impact, reaches `gyro-rotation` and the largest |ω| there reaches
/// `gyro-peak`. Everything else (the impact, the fast rule, the look's posture and stillness,
/// the slow turn, the moving rule, the refractory time) is ``MultiphaseDetector``'s, with its
/// settings. Samples without a gyroscope reading (an ADXL345, a three-axis recording) get the
/// accelerometer-only rules exactly.
public struct SixAxisDetector: FallDetector {
    public static let name = "sixaxis"
    public static let summary = "multiphase with the long look opened by the gyroscope's rotation alone (falls back to multiphase without a gyroscope)"
    public static let parameters = MultiphaseDetector.parameters

    private var core: MultiphaseDetector

    public init(settings: DetectorSettings = DetectorSettings(parameters: parameters)) {
        core = MultiphaseDetector(settings: settings, name: Self.name, gyroAlone: true)
    }

    public mutating func process(_ sample: AccelerationSample) -> FallSuspected? { core.process(sample) }
    public mutating func reset() { core.reset() }
    public var openDecision: OpenDecision? { core.openDecision }
    public mutating func learnedUpright(_ gravity: (x: Double, y: Double, z: Double)?) { core.learnedUpright(gravity) }
}
