import FallGuardCore
import Testing
import FallGuardTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Walking (steps) and not worn (only the sensor's noise): the wearer-activity detectors.
@Suite struct WearerActivityTests {
    func walkingShare(_ samples: [AccelerationSample], from: Double = 0) -> Double {
        var w = WalkingDetector()
        var on = 0, counted = 0
        for s in samples {
            let walks = w.process(s)
            if s.time - samples[0].time >= from { counted += 1; if walks { on += 1 } }
        }
        return Double(on) / Double(max(counted, 1))
    }

    @Test(arguments: [(1.2, 0.2), (1.8, 0.3), (2.2, 0.5)])
    func aGaitIsWalkingWithinTwoSeconds(cadence: Double, amplitude: Double) {
        var rng = SplitMix(seed: 11)
        let samples = Synthetic.gait(from: 0, seconds: 20, cadence: cadence, amplitude: amplitude, rng: &rng)
        var w = WalkingDetector()
        let first = samples.first { w.process($0) }?.time
        // Three steps, after the 1 s mean has settled: well within the 5 s the walking bar allows.
        #expect(first != nil && first! <= 1.5 + 2 / cadence, "\(cadence) steps/s: walking from \(first ?? -1) s")
        #expect(walkingShare(samples, from: 3) > 0.97)
    }

    @Test func standingStillAndSingleBumpsAreNoWalk() {
        var rng = SplitMix(seed: 13)
        #expect(walkingShare(Synthetic.standing(from: 0, seconds: 120, rng: &rng)) == 0)
        // Two steps, then still: sitting down or shifting weight is no walk.
        var s = Synthetic.gait(from: 0, seconds: 1.1, cadence: 1.8, amplitude: 0.3, rng: &rng)
        s += Synthetic.standing(from: 1.1, seconds: 10, rng: &rng)
        #expect(walkingShare(s) == 0)
    }

    @Test func aWalkEndsWithinTheLongestStep() {
        var rng = SplitMix(seed: 17)
        var s = Synthetic.gait(from: 0, seconds: 10, cadence: 1.8, amplitude: 0.3, rng: &rng)
        s += Synthetic.standing(from: 10, seconds: 5, rng: &rng)
        var w = WalkingDetector()
        var last = 0.0
        for x in s where w.process(x) { last = x.time }
        #expect(last > 9 && last < 11.1, "walking until \(last) s, the walk ended at 10 s")
        #expect(w.stepCount >= 16 && w.stepCount <= 19, "\(w.stepCount) steps in 10 s at 1.8 steps/s")
    }

    /// A device on a table: gravity plus the sensor's white noise (an ADXL345: about 4 mg per
    /// axis, 3.9 mg steps), or a quiet part whose noise is below its resolution.
    static func lyingOnATable(seconds: Double, noise: Double, step: Double, rng: inout SplitMix) -> [AccelerationSample] {
        func gauss(_ rng: inout SplitMix) -> Double { (-2 * log(max(rng.unit(), 1e-12))).squareRoot() * cos(2 * .pi * rng.unit()) }
        func q(_ v: Double) -> Double { (v / step).rounded() * step }
        return (0..<Int(seconds * 40)).map { i in
            AccelerationSample(time: Double(i) / 40, x: q(0.02 + noise * gauss(&rng)), y: q(-0.05 + noise * gauss(&rng)),
                               z: q(0.998 + noise * gauss(&rng)))
        }
    }

    /// Someone lying utterly still: the same noise, and the chest's breathing tilting the
    /// waist by 0.3° at 0.25 Hz (a shallow breath; the belly moves more).
    static func lyingStill(seconds: Double, rng: inout SplitMix) -> [AccelerationSample] {
        let table = lyingOnATable(seconds: seconds, noise: 0.004, step: 0.0039, rng: &rng)
        return table.map { s in
            let tilt = 0.3 * .pi / 180 * sin(2 * .pi * 0.25 * s.time)
            return AccelerationSample(time: s.time, x: s.x + sin(tilt), y: s.y, z: s.z * cos(tilt))
        }
    }

    @Test(arguments: [(0.004, 0.0039), (0.002, 0.00006), (0.0005, 0.0039)])
    func aDeviceOnATableIsNotWornAfterTheConfiguredTime(noise: Double, step: Double) {
        var rng = SplitMix(seed: 19)
        var d = NotWornDetector(settings: .init(after: 300))
        let samples = Self.lyingOnATable(seconds: 400, noise: noise, step: step, rng: &rng)
        let first = samples.first { d.process($0) }?.time
        #expect(first != nil && first! >= 299 && first! <= 301, "reported at \(first ?? -1) s, configured 300 s")
        #expect((d.lastRatio ?? 9) < 2)
    }

    @Test func someoneLyingStillForAnHourIsNeverCalledNotWorn() {
        var rng = SplitMix(seed: 23)
        var d = NotWornDetector(settings: .init(after: 60))
        let samples = Self.lyingStill(seconds: 3600, rng: &rng)
        #expect(!samples.contains { d.process($0) })
        #expect((d.lastRatio ?? 0) > 5, "breathing: \(d.lastRatio ?? 0)")
    }

    /// The upright learned while walking (issue 35, the bed) is kept through an hour lying
    /// still in bed, and forgotten once the device lies unworn (15 minutes on a table): it may be
    /// clipped on again another way round; 5 s of walking teach it again.
    @Test func theUprightOutlivesLyingStillButNotADeviceLeftUnworn() {
        var rng = SplitMix(seed: 31)
        var learner = UprightLearner()
        for s in Synthetic.gait(from: 0, seconds: 10, cadence: 1.8, amplitude: 0.3, rng: &rng) { learner.process(s) }
        #expect(learner.upright != nil, "5 s of walking make an upright")
        for s in Self.lyingStill(seconds: 3600, rng: &rng) { learner.process(AccelerationSample(time: s.time + 10, x: s.x, y: s.y, z: s.z)) }
        #expect(learner.upright != nil, "an hour asleep keeps it")
        for s in Self.lyingOnATable(seconds: 960, noise: 0.004, step: 0.0039, rng: &rng) {
            learner.process(AccelerationSample(time: s.time + 3610, x: s.x, y: s.y, z: s.z))
        }
        #expect(learner.upright == nil, "16 minutes unworn: forgotten")
        for s in Synthetic.gait(from: 4570, seconds: 10, cadence: 1.8, amplitude: 0.3, rng: &rng) { learner.process(s) }
        #expect(learner.upright != nil, "walking again teaches it again")
    }

    /// Short "walks" (a second or two here and there, as restlessness in bed can give) never add
    /// up to an upright: only one walk of 5 s does.
    @Test func onlyAWholeWalkOfFiveSecondsTeachesTheUpright() {
        var rng = SplitMix(seed: 37)
        var learner = UprightLearner()
        var t = 0.0
        for _ in 0..<12 {
            for s in Synthetic.gait(from: t, seconds: 3, cadence: 1.8, amplitude: 0.3, rng: &rng) { learner.process(s) }
            for s in Synthetic.standing(from: t + 3, seconds: 5, rng: &rng) { learner.process(s) }
            t += 8
        }
        #expect(learner.count >= UprightLearner.minimumSamples, "\(learner.count) walking samples in all")
        #expect(learner.upright == nil, "no walk of 5 s: no upright")
        for s in Synthetic.gait(from: t, seconds: 8, cadence: 1.8, amplitude: 0.3, rng: &rng) { learner.process(s) }
        #expect(learner.upright != nil)
    }

    @Test func pickingTheDeviceUpEndsNotWornAtOnce() {
        var rng = SplitMix(seed: 29)
        var d = NotWornDetector(settings: .init(after: 60))
        for s in Self.lyingOnATable(seconds: 130, noise: 0.004, step: 0.0039, rng: &rng) { d.process(s) }
        #expect(d.isNotWorn)
        var moved = false
        for s in Synthetic.gait(from: 130, seconds: 3, cadence: 1.8, amplitude: 0.3, rng: &rng) where !d.process(s) {
            moved = true
            #expect(s.time < 131.1, "worn again \(s.time - 130) s after it moved")
            break
        }
        #expect(moved)
    }
}
