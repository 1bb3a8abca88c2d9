/// The wearer's upright trunk, learned while they walk: the mean acceleration of the samples in
/// which ``WalkingDetector`` says the wearer walks is gravity in the sensor's axes with the trunk
/// upright, whatever the mounting. The multiphase detector uses it to tell an impact after the
/// wearer was lying already (turning over or rising in bed) from a fall (`lying-before`).
///
/// ``upright`` is the mean of the **last** `minimumSamples` walking samples (5 s of walking), so
/// a device clipped on another way round is right again after 5 s of walking; until 5 s of
/// walking were seen there is none. ``sum`` and ``count`` total all walking samples (what
/// `evaluate` adds up over a subject's other recordings, ``add(sum:count:)``).
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
/// O(1) per sample, no allocation after `init`.
public struct UprightLearner: Sendable {
    /// Samples of walking (5 s at 40 Hz) that make an upright.
    public static let minimumSamples = 200
    private var walking = WalkingDetector()
    private var notWorn = NotWornDetector()
    /// The sum of the acceleration over all walking samples, and their count.
    public private(set) var sum = (x: 0.0, y: 0.0, z: 0.0)
    public private(set) var count = 0
    private var recent: [(x: Double, y: Double, z: Double)]
    private var recentCount = 0

    public init() {
        recent = Array(repeating: (0, 0, 0), count: Self.minimumSamples)
    }

    /// Adds what another learner saw (another recording of the same wearer): counted in ``sum``
    /// and ``count``; ``upright`` of a learner made only of sums is their mean.
    public mutating func add(sum other: (x: Double, y: Double, z: Double), count n: Int) {
        sum.x += other.x; sum.y += other.y; sum.z += other.z
        count += n
    }

    /// Feeds one 40 Hz sample.
    public mutating func process(_ sample: AccelerationSample) {
        if notWorn.process(sample) {
            if count > 0 || recentCount > 0 { (sum, count, recentCount) = ((0, 0, 0), 0, 0) }
            return
        }
        guard walking.process(sample) else { return }
        sum.x += sample.x; sum.y += sample.y; sum.z += sample.z
        count += 1
        recent[recentCount % Self.minimumSamples] = (sample.x, sample.y, sample.z)
        recentCount += 1
    }

    /// Gravity with the trunk upright (any length): the last 5 s of walking this learner saw,
    /// or, for a learner made of other learners' sums, their mean; nil before 5 s of walking.
    public var upright: (x: Double, y: Double, z: Double)? {
        guard count >= Self.minimumSamples else { return nil }
        guard recentCount >= Self.minimumSamples else { return sum }
        var v = (x: 0.0, y: 0.0, z: 0.0)
        for r in recent { v.x += r.x; v.y += r.y; v.z += r.z }
        return v
    }
}
