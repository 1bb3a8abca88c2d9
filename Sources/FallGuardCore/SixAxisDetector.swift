/// The multiphase detector with a gyroscope (an MPU6050): the long look after a soft impact
/// opens on the rotation the gyroscope measures, not on the accelerometer's estimate of it.
///
/// A fall from sitting or a faint turns the trunk as it topples; the accelerometer sees that
/// turn only through mean vectors that the impact and the body's own acceleration blur, so a
/// slow fall that turned enough can look like sitting down (issue 35). The gyroscope measures
/// the rotation itself: the look opens when the net rotation |Σ ω Δt| over one second,
/// ending from 1 s before to 250 ms after the impact, reaches `gyro-rotation` and the largest
/// |ω| there reaches `gyro-peak`: a body that topples turns far and fast; one that sits or
/// lies down on purpose is lowered at 100-200 °/s. Everything else
/// (the impact, the fast rule, the look's posture and stillness, the refractory time) is
/// ``MultiphaseDetector``'s, with its settings; detections also name the gyroscope's rotation
/// and the peak |ω| (`peak-angular-velocity`).
///
/// Samples without a gyroscope reading (an ADXL345, a three-axis recording) get the
/// accelerometer-only rules exactly: the look's rotation then comes from `look-rotation`.
/// The same O(1) work per sample as the multiphase detector plus three stored numbers; no
/// allocation except when it fires.
public struct SixAxisDetector: FallDetector {
    public static let name = "sixaxis"
    public static let summary = "multiphase, with the long look opened by the gyroscope's rotation (falls back to multiphase without a gyroscope)"
    public static let parameters = MultiphaseDetector.parameters.map { p in
        switch p.key {
        case "soft-impact": return DetectorParameter(p.key, softImpact, p.range, p.unit, p.help)
        default: return p
        }
    } + [
        DetectorParameter("gyro-rotation", 50.0, 0.0...360.0, "deg",
                          "smallest net rotation the gyroscope measures within 1 s around a soft impact that opens a long look"),
        DetectorParameter("gyro-peak", 200.0, 0.0...2000.0, "deg/s",
                          "smallest peak |w| from 1 s before to 250 ms after a soft impact that opens a long look"),
    ]
    /// Defaults, from leave-one-subject-out cross-validation (tools/detector-research/sixaxis.py).
    static let softImpact = 1.4

    private var core: MultiphaseDetector

    public init(settings: DetectorSettings = DetectorSettings(parameters: parameters)) {
        core = MultiphaseDetector(settings: settings, name: Self.name,
                                  gyroGate: (rotation: settings["gyro-rotation"], peakRate: settings["gyro-peak"]))
    }

    public mutating func process(_ sample: AccelerationSample) -> FallSuspected? { core.process(sample) }
    public mutating func reset() { core.reset() }
    public var openDecision: OpenDecision? { core.openDecision }
}
