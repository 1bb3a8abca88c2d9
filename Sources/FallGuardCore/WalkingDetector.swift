/// Walking from a worn accelerometer's steps: what the alarm asks during a countdown (a wearer
/// who walks off was not hurt, if they chose `alarm.auto-cancel-when-walking`) and what an
/// alert can say.
///
/// A step is a rise of |a| above its 1 s mean by at least `stepRise` (the trunk's bounce as a
/// foot lands), counted once |a| has come back to the mean since the last one, and no sooner
/// than `shortestStep` after it (a heel strike's second peak is no step). The wearer walks
/// while the last `steps` steps came `shortestStep`…`longestStep` apart, the longest interval
/// at most `regularity` times the shortest, and the last step no longer than `longestStep`
/// ago. Every quantity is a magnitude, so the mounting does not matter.
///
/// Defaults from the physics of gait (40–170 steps a minute) checked on the dev data
/// (`bench/daily-living.sh`): on hapt-dev-50hz 100.0 % of walking and stairs time is recognised
/// from 5 s into it (95 % within 1.4 s of its start) and 0.87 % of sitting, standing and lying
/// time is called walking; the SisFall older subjects' slow walking (D01) 97.8 %.
///
/// O(1) work per sample (a running 1 s sum, recomputed every second so it cannot drift), no
/// allocation after `init`.
public struct WalkingDetector: Sendable {
    public struct Settings: Sendable, Equatable {
        /// g above the 1 s mean of |a| that is a step.
        public var stepRise: Double
        /// Seconds: the shortest and longest time between two steps of a walk.
        public var shortestStep: Double
        public var longestStep: Double
        /// Largest ratio of the longest to the shortest of the recent intervals.
        public var regularity: Double
        /// Steps in a row that make a walk.
        public var steps: Int

        public init(stepRise: Double = 0.12, shortestStep: Double = 0.35, longestStep: Double = 1.0,
                    regularity: Double = 2.5, steps: Int = 3) {
            (self.stepRise, self.shortestStep, self.longestStep, self.regularity, self.steps) =
                (stepRise, shortestStep, longestStep, regularity, max(2, min(steps, 8)))
        }
    }

    public let settings: Settings
    private static let window = 40   // the 1 s mean of |a|, in samples at 40 Hz
    private var magnitudes: [Double]
    private var sum = 0.0
    private var n = 0
    private var armed = false
    /// Sample indices of the last steps, oldest first (at most 8).
    private var recent: [Int]
    private var recentCount = 0
    private let shortest: Int, longest: Int

    /// True while the wearer walks (as of the last sample).
    public private(set) var isWalking = false
    /// Steps counted since the start.
    public private(set) var stepCount = 0

    public init(settings: Settings = Settings()) {
        self.settings = settings
        magnitudes = [Double](repeating: 0, count: Self.window)
        recent = [Int](repeating: 0, count: 8)
        shortest = Int((settings.shortestStep * detectorRate).rounded())
        longest = Int((settings.longestStep * detectorRate).rounded())
    }

    /// Forgets the stream, in place (no allocation: the detector resets one for each candidate).
    public mutating func reset() {
        for i in magnitudes.indices { magnitudes[i] = 0 }
        sum = 0
        n = 0
        armed = false
        recentCount = 0
        isWalking = false
        stepCount = 0
    }

    /// Feeds one 40 Hz sample; returns whether the wearer walks now.
    @discardableResult
    public mutating func process(_ sample: AccelerationSample) -> Bool {
        let t = n
        let m = sample.magnitude
        let k = t % Self.window
        sum += m - (t >= Self.window ? magnitudes[k] : 0)
        magnitudes[k] = m
        n = t + 1
        if k == Self.window - 1 { sum = magnitudes.reduce(0, +) }   // no drift over a day
        let rise = m - sum / Double(min(n, Self.window))
        if rise < 0 {
            armed = true
        } else if armed, rise > settings.stepRise, recentCount == 0 || t - recent[recentCount - 1] >= shortest {
            if recentCount == recent.count {
                for i in 1..<recent.count { recent[i - 1] = recent[i] }
                recentCount -= 1
            }
            recent[recentCount] = t
            recentCount += 1
            stepCount += 1
            armed = false
        }
        isWalking = walking(now: t)
        return isWalking
    }

    private func walking(now t: Int) -> Bool {
        let need = settings.steps
        guard recentCount >= need, t - recent[recentCount - 1] <= longest else { return false }
        var lo = Int.max, hi = 0
        for i in (recentCount - need + 1)..<recentCount {
            let interval = recent[i] - recent[i - 1]
            lo = min(lo, interval)
            hi = max(hi, interval)
        }
        return lo >= shortest && hi <= longest && Double(hi) <= settings.regularity * Double(lo)
    }
}
