/// A device that nobody wears: lying on a table or in a drawer it shows only its sensor's own
/// noise, for minutes on end. A body never does: even asleep or sitting utterly still it
/// breathes, its heart beats and it shifts, which moves the gravity vector a worn sensor sees
/// by 5–30 mg at a few tenths of a hertz.
///
/// The test is the sensor's noise against itself, so it needs no noise figure for the part:
/// over each minute, the spread of the 1 s means of x, y and z (their variance, summed over the
/// axes) is compared with what the noise inside each second explains (the variance within the
/// seconds, divided by the 40 samples a mean averages). White noise alone gives a ratio near 1
/// (at most 1.56 in an hour of simulated ADXL345 and MPU6050 noise); a body gives 5–40 (the
/// lowest of HAPT's 180 sitting, standing and lying stretches: 1.8 over 20 s, with a phone on
/// the belt). A minute is **lifeless** when that ratio is at most `lifelessRatio` (or the
/// means wander less than 1 mg, for a part whose noise is below its resolution) and no second
/// in it moved (std of |a| ≤ `quiet`). The device is **not worn** after `after` seconds of
/// lifeless minutes in a row, and worn again at the first second that moves (std |a| > `moved`)
/// or the first minute that is not lifeless. Sleep, lying and sitting still are never called
/// not worn: they breathe.
///
/// O(1) work per sample, no allocation after `init`.
public struct NotWornDetector: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Seconds of lifeless minutes before the device is called not worn (whole minutes).
        public var after: Double
        public var lifelessRatio: Double
        /// g: the largest std of |a| within a second of a lifeless minute.
        public var quiet: Double
        /// g: a second whose std of |a| exceeds this is movement (worn again at once).
        public var moved: Double

        public init(after: Double = 900, lifelessRatio: Double = 2.0, quiet: Double = 0.02, moved: Double = 0.05) {
            (self.after, self.lifelessRatio, self.quiet, self.moved) = (max(60, after), lifelessRatio, quiet, moved)
        }
    }

    public let settings: Settings
    static let second = 40
    static let minute = 60
    /// g: means that wander less than this are lifeless whatever the noise (below resolution).
    static let floor = 0.001

    // The second in progress: sums of the samples less the first one of the second (no
    // cancellation), and of their squares.
    private var origin = (x: 0.0, y: 0.0, z: 0.0)
    private var s = (x: 0.0, y: 0.0, z: 0.0), q = (x: 0.0, y: 0.0, z: 0.0)
    private var magnitudeSum = 0.0, magnitudeSquares = 0.0
    private var samplesInSecond = 0
    // The minute in progress: sums of the seconds' means (less the minute's first) and squares,
    // the sum of the within-second variances, and whether a second moved or was not quiet.
    private var minuteOrigin = (x: 0.0, y: 0.0, z: 0.0)
    private var m = (x: 0.0, y: 0.0, z: 0.0), mq = (x: 0.0, y: 0.0, z: 0.0)
    private var within = 0.0
    private var secondsInMinute = 0
    private var minuteQuiet = true
    private var lifelessSeconds = 0.0

    /// True once the device has been lifeless for `after` seconds; false again when it moves.
    public private(set) var isNotWorn = false
    /// The last minute's ratio of the means' spread to the noise (for reports and tests).
    public private(set) var lastRatio: Double?

    public init(settings: Settings = Settings()) { self.settings = settings }

    public mutating func reset() { self = NotWornDetector(settings: settings) }

    /// Feeds one 40 Hz sample; returns whether the device is not worn now.
    @discardableResult
    public mutating func process(_ sample: AccelerationSample) -> Bool {
        if samplesInSecond == 0 { origin = (sample.x, sample.y, sample.z) }
        let d = (x: sample.x - origin.x, y: sample.y - origin.y, z: sample.z - origin.z)
        s.x += d.x; s.y += d.y; s.z += d.z
        q.x += d.x * d.x; q.y += d.y * d.y; q.z += d.z * d.z
        let a = sample.magnitude
        magnitudeSum += a
        magnitudeSquares += a * a
        samplesInSecond += 1
        if samplesInSecond == Self.second { endSecond() }
        return isNotWorn
    }

    private mutating func endSecond() {
        let n = Double(Self.second)
        let mean = (x: origin.x + s.x / n, y: origin.y + s.y / n, z: origin.z + s.z / n)
        let variance = max(0, q.x / n - (s.x / n) * (s.x / n)) + max(0, q.y / n - (s.y / n) * (s.y / n))
            + max(0, q.z / n - (s.z / n) * (s.z / n))
        let magnitudeMean = magnitudeSum / n
        let magnitudeStd = max(0, magnitudeSquares / n - magnitudeMean * magnitudeMean).squareRoot()
        (s, q, magnitudeSum, magnitudeSquares, samplesInSecond) = ((0, 0, 0), (0, 0, 0), 0, 0, 0)

        if magnitudeStd > settings.moved {
            // Moved: worn, and the minute starts afresh.
            isNotWorn = false
            lifelessSeconds = 0
            secondsInMinute = 0
            return
        }
        if secondsInMinute == 0 {
            minuteOrigin = mean
            (m, mq, within, minuteQuiet) = ((0, 0, 0), (0, 0, 0), 0, true)
        }
        let e = (x: mean.x - minuteOrigin.x, y: mean.y - minuteOrigin.y, z: mean.z - minuteOrigin.z)
        m.x += e.x; m.y += e.y; m.z += e.z
        mq.x += e.x * e.x; mq.y += e.y * e.y; mq.z += e.z * e.z
        within += variance
        if magnitudeStd > settings.quiet { minuteQuiet = false }
        secondsInMinute += 1
        if secondsInMinute == Self.minute { endMinute() }
    }

    private mutating func endMinute() {
        let k = Double(Self.minute)
        let spread = max(0, mq.x / k - (m.x / k) * (m.x / k)) + max(0, mq.y / k - (m.y / k) * (m.y / k))
            + max(0, mq.z / k - (m.z / k) * (m.z / k))
        let noise = within / k / Double(Self.second)
        let ratio = noise > 0 ? spread / noise : (spread > 0 ? .infinity : 0)
        lastRatio = ratio
        secondsInMinute = 0
        let lifeless = minuteQuiet && (ratio <= settings.lifelessRatio || spread <= Self.floor * Self.floor)
        if lifeless {
            lifelessSeconds += k
            if lifelessSeconds >= settings.after { isNotWorn = true }
        } else {
            lifelessSeconds = 0
            isNotWorn = false
        }
    }
}
