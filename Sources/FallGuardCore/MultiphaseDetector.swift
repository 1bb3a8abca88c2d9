/// The default detector: an impact, then a posture change and post-impact stillness.
///
/// (First version; the tuned algorithm replaces it.)
public struct MultiphaseDetector: FallDetector {
    public static let name = "multiphase"
    public static let summary = "impact, then posture change and stillness (default)"
    public static let parameters = [
        DetectorParameter("impact", 2.5, 1.2...16.0, "g", "acceleration magnitude that counts as an impact"),
        DetectorParameter("posture-change", 35.0, 0.0...180.0, "deg", "angle between gravity before and after the impact"),
        DetectorParameter("stillness", 0.15, 0.0...2.0, "g", "largest std of the magnitude 1-2.5 s after the impact"),
        DetectorParameter("refractory", 10.0, 0.0...120.0, "s", "quiet time after a detection, so one fall is one event"),
    ]

    private let impact: Double, postureChange: Double, stillness: Double, refractory: Double
    private var history = SampleHistory(capacity: 8 * 40)
    private var candidate: Int?   // index of the impact peak being judged
    private var quietUntil = -Double.infinity
    private let decisionDelay = Int(2.5 * detectorRate)

    public init(settings: DetectorSettings = DetectorSettings(parameters: parameters)) {
        impact = settings["impact"]
        postureChange = settings["posture-change"]
        stillness = settings["stillness"]
        refractory = settings["refractory"]
    }

    public mutating func process(_ s: AccelerationSample) -> FallSuspected? {
        let m = s.magnitude
        let i = history.count
        history.append(s, magnitude: m)
        if let c = candidate {
            if m > history.magnitude(at: c), i - c < 20 { candidate = i }  // follow the peak
            if i - c >= decisionDelay {
                candidate = nil
                return judge(impactIndex: c, now: s.time)
            }
            return nil
        }
        if m > impact, s.time >= quietUntil { candidate = i }
        return nil
    }

    private mutating func judge(impactIndex c: Int, now: Double) -> FallSuspected? {
        let rate = Int(detectorRate)
        guard let before = history.meanVector((c - 2 * rate)..<(c - rate / 2)),
              let after = history.meanVector((c + rate + rate / 2)..<(c + 5 * rate / 2)),
              let still = history.magnitudeDeviation((c + rate)..<(c + 5 * rate / 2)) else { return nil }
        let angle = angleDegrees(before, after)
        guard angle >= postureChange, still <= stillness else { return nil }
        let impactTime = now - Double(history.count - 1 - c) / detectorRate
        quietUntil = now + refractory
        return FallSuspected(
            detector: Self.name, impactTime: impactTime, decisionTime: now, peak: history.magnitude(at: c),
            phases: ["impact", "posture-change", "stillness"],
            features: [DetectionFeature("peak", history.magnitude(at: c), "g"),
                       DetectionFeature("posture-change", angle, "deg"),
                       DetectionFeature("stillness", still, "g")])
    }

    public mutating func reset() {
        history.reset()
        candidate = nil
        quietUntil = -.infinity
    }
}
