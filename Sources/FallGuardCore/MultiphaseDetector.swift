/// The default detector: an impact, then a change of posture and stillness.
///
/// Three phases, all of which must pass (windows in samples at 40 Hz; `c` is the impact):
/// 1. **Impact**: the 125 ms moving average of |a| peaks at `c` (a local maximum over ±1 s)
///    at or above `impact`. Falls carry a sustained deceleration; everyday bumps (sitting,
///    stepping, jumping) are short spikes that the average flattens. On SisFall this single
///    choice lifts specificity at 99 % sensitivity from 97.2 % (raw peak) to 99.5 %.
/// 2. **Posture change**: the angle between the mean acceleration vector (gravity) over
///    2.0–0.5 s before the impact and over 1.0–2.5 s after it is at least `posture-change`,
///    or at least `strong-posture-change` after a strong impact (≥ `strong-impact`), which
///    catches falls that end half-sitting or kneeling.
/// 3. **Stillness**: the standard deviation of |a| over 1.0–2.5 s after the impact is at
///    most `stillness`.
///
/// The decision comes 2.475 s after the impact peak. Every feature is a magnitude, an
/// angle between two vectors or a deviation of the magnitude, so the sensor's mounting and
/// axis convention do not matter. The free-fall minimum and pre-impact activity are
/// reported for the field tester but do not decide.
///
/// Defaults were chosen by leave-one-subject-out cross-validation on SisFall (Sucerquia et
/// al., Sensors 17(1):198, 2017); see `bench/detector-cv.sh` and `tools/detector-research/`.
/// O(1) work per sample; when a candidate peak is due, one bounded pass over at most 180
/// buffered samples. No allocation except when it fires.
public struct MultiphaseDetector: FallDetector {
    public static let name = "multiphase"
    public static let summary = "smoothed impact, then posture change and stillness (default)"
    public static let parameters = [
        DetectorParameter("impact", 1.65, 1.0...16.0, "g", "peak of the 125 ms mean of |a| that counts as an impact"),
        DetectorParameter("posture-change", 40.0, 0.0...180.0, "deg", "angle between gravity 2-0.5 s before and 1-2.5 s after the impact"),
        DetectorParameter("stillness", 0.40, 0.0...4.0, "g", "largest std of |a| 1-2.5 s after the impact"),
        DetectorParameter("strong-impact", 2.6, 1.0...16.0, "g", "an impact this strong needs only strong-posture-change"),
        DetectorParameter("strong-posture-change", 20.0, 0.0...180.0, "deg", "posture change that suffices after a strong impact"),
        DetectorParameter("refractory", 10.0, 0.0...120.0, "s", "quiet time after a detection, so one fall is one event"),
    ]

    // Fixed structure, in samples at 40 Hz.
    static let ring = 256            // power of two > preStart + postEnd
    static let smoothing = 5         // 125 ms moving average of |a|
    static let peakHalfWindow = 40   // the impact is the largest smoothed |a| within ±1 s
    static let preStart = 80         // pre-impact gravity: [c-80, c-20), 2.0 to 0.5 s before
    static let preEnd = 20
    static let postStart = 40        // post-impact gravity and stillness: [c+40, c+100)
    static let postEnd = 100
    static let freeFallBelow = 0.6   // g, smoothed |a| that is reported as a free-fall phase

    private let impact: Double, postureChange: Double, stillness: Double
    private let strongImpact: Double, strongPostureChange: Double
    private let refractorySamples: Int

    private var xs: [Double], ys: [Double], zs: [Double], mags: [Double], smooth: [Double], times: [Double]
    private var n = 0
    private var refractoryUntil = -1

    public init(settings: DetectorSettings = DetectorSettings(parameters: parameters)) {
        impact = settings["impact"]
        postureChange = settings["posture-change"]
        stillness = settings["stillness"]
        strongImpact = settings["strong-impact"]
        strongPostureChange = settings["strong-posture-change"]
        refractorySamples = Int((settings["refractory"] * detectorRate).rounded())
        let zeros = [Double](repeating: 0, count: Self.ring)
        (xs, ys, zs, mags, smooth, times) = (zeros, zeros, zeros, zeros, zeros, zeros)
    }

    public mutating func reset() {
        n = 0
        refractoryUntil = -1
    }

    @inline(__always) private func m(_ i: Int) -> Double { mags[i & (Self.ring - 1)] }
    @inline(__always) private func s(_ i: Int) -> Double { smooth[i & (Self.ring - 1)] }

    public mutating func process(_ sample: AccelerationSample) -> FallSuspected? {
        let t = n
        let k = t & (Self.ring - 1)
        let magnitude = sample.magnitude
        xs[k] = sample.x
        ys[k] = sample.y
        zs[k] = sample.z
        mags[k] = magnitude
        times[k] = sample.time
        if t >= Self.smoothing - 1 {
            // Summed directly (not a running sum) so long uptimes accumulate no rounding drift.
            var acc = 0.0
            for j in (t - Self.smoothing + 1)...t { acc += m(j) }
            smooth[k] = acc / Double(Self.smoothing)
        } else {
            smooth[k] = 0
        }
        n = t + 1

        let c = t - (Self.postEnd - 1)   // the candidate whose decision is due now
        guard c >= 0, t >= refractoryUntil, s(c) >= impact else { return nil }
        return judge(candidate: c, now: t)
    }

    private mutating func judge(candidate c: Int, now t: Int) -> FallSuspected? {
        let peak = s(c)
        // Phase 1: a local maximum, strict on the left and not exceeded on the right.
        for j in max(0, c - Self.peakHalfWindow)..<c where s(j) >= peak { return nil }
        for j in (c + 1)...(c + Self.peakHalfWindow) where s(j) > peak { return nil }

        let p0 = max(0, c - Self.preStart), p1 = c - Self.preEnd
        guard p1 > p0 else { return nil }   // an impact in the first 0.525 s cannot be judged
        var before = (x: 0.0, y: 0.0, z: 0.0)
        for j in p0..<p1 {
            let q = j & (Self.ring - 1)
            before.x += xs[q]; before.y += ys[q]; before.z += zs[q]
        }
        var after = (x: 0.0, y: 0.0, z: 0.0)
        var sum = 0.0
        for j in (c + Self.postStart)..<(c + Self.postEnd) {
            let q = j & (Self.ring - 1)
            after.x += xs[q]; after.y += ys[q]; after.z += zs[q]
            sum += mags[q]
        }
        let count = Double(Self.postEnd - Self.postStart)
        let mean = sum / count
        var variance = 0.0
        for j in (c + Self.postStart)..<(c + Self.postEnd) {
            let d = m(j) - mean
            variance += d * d
        }
        let still = (variance / count).squareRoot()
        let angle = angleDegrees(before, after)

        // Phases 2 and 3.
        let strong = peak >= strongImpact
        let postureOK = angle >= postureChange || (strong && angle >= strongPostureChange)
        guard postureOK, still <= stillness else { return nil }
        refractoryUntil = t + refractorySamples
        return event(candidate: c, now: t, peak: peak, strong: strong, angle: angle, still: still, pre: p0..<p1)
    }

    private func event(candidate c: Int, now t: Int, peak: Double, strong: Bool, angle: Double, still: Double, pre: Range<Int>) -> FallSuspected {
        var freeFall = Double.infinity
        for j in max(0, c - Self.peakHalfWindow)...c { freeFall = min(freeFall, s(j)) }
        // The smoothed peak ends its 125 ms window; the impact itself is the largest raw |a| in it.
        var rawPeak = 0.0, rawPeakIndex = c
        for j in max(0, c - Self.smoothing + 1)...c where m(j) > rawPeak {
            rawPeak = m(j)
            rawPeakIndex = j
        }
        var preSum = 0.0
        for j in pre { preSum += m(j) }
        let preMean = preSum / Double(pre.count)
        var preVar = 0.0
        for j in pre { preVar += (m(j) - preMean) * (m(j) - preMean) }
        let preActivity = (preVar / Double(pre.count)).squareRoot()

        var phases: [String] = []
        if freeFall < Self.freeFallBelow { phases.append("free-fall") }
        phases.append(strong ? "strong-impact" : "impact")
        phases.append("posture-change")
        phases.append("stillness")
        return FallSuspected(
            detector: Self.name,
            impactTime: times[rawPeakIndex & (Self.ring - 1)],
            decisionTime: times[t & (Self.ring - 1)],
            peak: rawPeak,
            phases: phases,
            features: [
                DetectionFeature("impact", peak, "g"),
                DetectionFeature("peak", rawPeak, "g"),
                DetectionFeature("posture-change", angle, "deg"),
                DetectionFeature("stillness", still, "g"),
                DetectionFeature("free-fall-min", freeFall, "g"),
                DetectionFeature("pre-impact-activity", preActivity, "g"),
            ])
    }
}
