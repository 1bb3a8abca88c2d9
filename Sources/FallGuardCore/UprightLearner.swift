/// The wearer's upright trunk, learned while they walk: the mean acceleration of the samples in
/// which ``WalkingDetector`` says the wearer walks is gravity in the sensor's axes with the trunk
/// upright, whatever the mounting. The multiphase detector can use it to tell an impact after
/// the wearer was lying already (turning over or rising in bed) from a fall (`lying-before`,
/// off by default).
///
/// A learner fed samples (the daemon's) takes ``upright`` from the last **whole walk** of 5 s or
/// more whose mean is near 1 g: a second of "walking" here and there (restlessness in bed, the
/// walking detector's 0.9 % of sitting, standing and lying time) never adds up to an upright, and
/// a device clipped on another way round is right again after 5 s of walking; until then there
/// is none. ``sum`` and ``count`` total all walking samples: what `evaluate` adds up over a
/// subject's other recordings (``add(sum:count:)``; a learner made only of sums gives their mean).
///
/// Measured on the dev folders (tools/detector-research/bed.py `stability`): the upright learned
/// from either half of a subject's walking trials agrees within 0.4-5.2° (31 subjects), and the
/// first second of a trial that starts standing or walking lies a median 8.5° (SisFall) / 11.6°
/// (FallAllD) from it (90th percentile 20° / 23°).
///
/// A device that lies unworn (``NotWornDetector``: only the sensor's noise for minutes) forgets
/// its upright: it may be clipped on again another way round, and a wrong upright could make an
/// upright trunk look lying. Until 5 s of walking teach it again, the detector decides without.
///
/// O(1) per sample, no allocation.
public struct UprightLearner: Sendable {
    /// Samples of one walk (5 s at 40 Hz) that make an upright.
    public static let minimumSamples = 200
    /// The mean magnitude a walk's gravity must have (g): a walk is no free fall or shaking.
    static let gravity: ClosedRange<Double> = 0.8...1.2
    private var walking = WalkingDetector()
    private var notWorn = NotWornDetector()
    /// The sum of the acceleration over all walking samples, and their count.
    public private(set) var sum = (x: 0.0, y: 0.0, z: 0.0)
    public private(set) var count = 0
    /// The walk going on now (a sample that is no walk ends it): its sum and length.
    private var walk = (x: 0.0, y: 0.0, z: 0.0)
    private var walkCount = 0
    /// The sum over the last walk of ``minimumSamples`` or more near 1 g.
    private var lastWalk: (x: Double, y: Double, z: Double)?
    /// Samples were fed (``process(_:)``): only a whole walk makes the upright.
    private var fed = false

    public init() {}

    /// Adds what another learner saw (another recording of the same wearer): counted in ``sum``
    /// and ``count``; ``upright`` of a learner made only of sums is their mean.
    public mutating func add(sum other: (x: Double, y: Double, z: Double), count n: Int) {
        sum.x += other.x; sum.y += other.y; sum.z += other.z
        count += n
    }

    /// Feeds one 40 Hz sample.
    public mutating func process(_ sample: AccelerationSample) {
        fed = true
        if notWorn.process(sample) {
            if count > 0 || walkCount > 0 || lastWalk != nil {
                (sum, count, walk, walkCount, lastWalk) = ((0, 0, 0), 0, (0, 0, 0), 0, nil)
            }
            return
        }
        guard walking.process(sample) else {
            (walk, walkCount) = ((0, 0, 0), 0)
            return
        }
        sum.x += sample.x; sum.y += sample.y; sum.z += sample.z
        count += 1
        walk.x += sample.x; walk.y += sample.y; walk.z += sample.z
        walkCount += 1
        if walkCount >= Self.minimumSamples {
            let mean = (walk.x * walk.x + walk.y * walk.y + walk.z * walk.z).squareRoot() / Double(walkCount)
            if Self.gravity.contains(mean) { lastWalk = walk }
        }
    }

    /// Gravity with the trunk upright (any length): the last whole walk of 5 s this learner saw,
    /// or, for a learner made of other learners' sums, their mean; nil before either.
    public var upright: (x: Double, y: Double, z: Double)? {
        if fed { return lastWalk }
        guard count >= Self.minimumSamples else { return nil }
        return sum
    }
}
