/// After a suspected fall: is the wearer up again? A fall the wearer gets up from is still a
/// fall (the strongest predictor of the next one), but not an emergency: the alarm's countdown
/// ends as a *recovered fall* when this says so (issue 35).
///
/// Up again: the 250 ms mean of the acceleration back within `upright-tilt` (35°) of the
/// gravity measured before the impact (``FallSuspected/gravityBefore``) for a whole second.
/// Someone lying on the floor, whatever they do there, is 60–90° from how they stood; someone
/// who stood up again is back within 10–30° (FallAllD's falls with recovery: median 9° over the
/// last second). Pure and streaming: one sum per sample, one angle per 250 ms, no allocation.
/// A fall that left the trunk less than 45° from how it stood (a strong impact that ends
/// kneeling or half sitting, 20° or more; a calm slump, 30°) would read as up again where it
/// ends: up again is then at least 10° nearer the posture before than the fall left it (the
/// look's smallest tilt, else its `posture-change`). The moving rule's wearer was down (60° or
/// more) for a second: 35° as it is.
///
/// After a **wall slide** (phase `wall-slide`) 35° says nothing: the rule's wearer ends sitting
/// against the wall 20–60° from standing, and a faint that leaves the trunk under 35° would read
/// as up again at once. So up again is standing again: within `standingTilt` (15°; FallAllD's
/// falls with recovery: median 9°) and at least 10° nearer standing than the slide left the
/// trunk (its `posture-change`), and only once the wearer has moved since the detection (a
/// gyroscope reading of at least `movedRate`, the still test's 15 °/s; without a gyroscope, an
/// ADXL345, two quarter seconds in a row whose std |a| reaches `movedStd`, 0.05 g: getting up
/// lifts the body's weight for longer than a twitch): a posture that was never left is not
/// enough.
public struct RecoveryWatch: Sendable {
    /// The alarm's default countdown (`alarm.countdown`), the time offline runs watch for.
    public static let countdown = 30.0
    /// Degrees from the pre-fall posture that count as up again.
    public static let uprightTilt = 35.0
    /// Samples (at 40 Hz) per mean: 250 ms.
    public static let block = 10
    /// Consecutive upright means that make the wearer up again: one second.
    public static let holdBlocks = 4
    /// After a wall slide: the angular velocity (°/s) that shows the wearer moved.
    public static let movedRate = MultiphaseDetector.stillRate
    /// After a wall slide, without a gyroscope: the std of |a| (g) over each of two quarter
    /// seconds in a row that shows the wearer moved. Lying after SisFall's falls (899 trials,
    /// from 6 s after the impact) passes it in 5 (the gyroscope's 15 °/s in 63); FallAllD's
    /// falls with recovery in 78 of 80.
    public static let movedStd = 0.05
    /// After a wall slide: degrees from the pre-fall posture that count as standing again.
    public static let standingTilt = 15.0

    private let before: (x: Double, y: Double, z: Double)
    private let impactTime: Double
    private var sum = (x: 0.0, y: 0.0, z: 0.0)
    /// Sums of |a| and |a|² over the quarter second, and whether the one before moved (the
    /// move without a gyroscope).
    private var magnitudes = (sum: 0.0, squares: 0.0)
    private var movingBefore = false
    /// Whether a sample of this quarter second carried a gyroscope reading (then it decides).
    private var gyroInBlock = false
    private var count = 0
    private var run = 0
    /// Whether the wearer has moved since the detection (always, but after a wall slide).
    private var moved: Bool
    /// Degrees from the pre-fall posture that count as up again for this detection.
    private let tilt: Double
    /// Seconds after the impact at which the wearer was up again; nil until then.
    public private(set) var upAfter: Double?

    /// Nil when the detection carries no pre-impact gravity (a detector that does not measure
    /// posture): nothing can tell that its wearer is up again.
    public init?(after detection: FallSuspected) {
        guard let g = detection.gravityBefore, g.count == 3, g.contains(where: { $0 != 0 }) else { return nil }
        before = (g[0], g[1], g[2])
        impactTime = detection.impactTime
        let slide = detection.phases.contains("wall-slide")
        moved = !slide
        // How far the fall left the trunk: the look's smallest tilt where it had a look (the
        // trunk stayed at least that far), else the posture change at +1-2.5 s.
        func feature(_ name: String) -> Double? { detection.features.first { $0.name == name }?.value }
        let left = feature("look-posture-change") ?? feature("posture-change") ?? .infinity
        if slide {
            tilt = min(Self.standingTilt, left - 10)
        } else if detection.phases.contains("moving") {
            tilt = Self.uprightTilt   // it was down (≥ moving-tilt) for a second or more
        } else {
            tilt = min(Self.uprightTilt, left - 10)
        }
    }

    /// One 40 Hz sample after the detection; true once, with the sample that completes the
    /// upright second (``upAfter`` is set from then on).
    public mutating func process(_ sample: AccelerationSample) -> Bool {
        guard upAfter == nil else { return false }
        if !moved, let w = sample.gyro, w.x * w.x + w.y * w.y + w.z * w.z >= Self.movedRate * Self.movedRate {
            moved = true
        }
        sum.x += sample.x; sum.y += sample.y; sum.z += sample.z
        if !moved {   // the move's test, only while it is still wanted (after a wall slide)
            gyroInBlock = gyroInBlock || sample.gyro != nil
            let m = sample.magnitude
            magnitudes.sum += m; magnitudes.squares += m * m
        }
        count += 1
        guard count == Self.block else { return false }
        let upright = (sum.x != 0 || sum.y != 0 || sum.z != 0) && angleDegrees(before, sum) <= tilt
        if !moved, !gyroInBlock {
            let mean = magnitudes.sum / Double(Self.block)
            let moving = magnitudes.squares / Double(Self.block) - mean * mean >= Self.movedStd * Self.movedStd
            moved = moving && movingBefore
            movingBefore = moving
        } else {
            movingBefore = false   // two quarter seconds in a row, both without a gyroscope
        }
        sum = (0, 0, 0)
        magnitudes = (0, 0)
        gyroInBlock = false
        count = 0
        run = upright && moved ? run + 1 : 0
        guard run >= Self.holdBlocks else { return false }
        upAfter = max(0, sample.time - impactTime)
        return true
    }
}
