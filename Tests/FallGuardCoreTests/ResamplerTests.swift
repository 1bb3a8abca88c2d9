import FallGuardCore
import Testing
import FallGuardTestSupport

@Suite struct ResamplerTests {
    func run(_ r: inout Resampler, _ input: [AccelerationSample]) -> [AccelerationSample] {
        var out: [AccelerationSample] = []
        for s in input { r.process(s) { out.append($0) } }
        return out
    }

    func sine(rate: Double, seconds: Double, hz: Double, jitter: Double = 0, seed: UInt64 = 1) -> [AccelerationSample] {
        var rng = SplitMix(seed: seed)
        let n = Int(rate * seconds)
        return (0..<n).map { i in
            let t = Double(i) / rate + (jitter > 0 ? (rng.unit() - 0.5) * jitter / rate : 0)
            return AccelerationSample(time: 100 + t, x: sin(2 * .pi * hz * t), y: 1, z: t)
        }
    }

    @Test func fortyHertzPassesThroughUnchanged() throws {
        var r = try Resampler(inputRate: 40)
        let input = sine(rate: 40, seconds: 10, hz: 1.3)
        let out = run(&r, input)
        #expect(out.count == input.count)
        for (a, b) in zip(input, out) {
            #expect(abs(a.time - b.time) < 1e-9 && abs(a.x - b.x) < 1e-9 && a.y == b.y)
        }
    }

    /// Any rate from 25 to 1000 Hz gives 40 samples per second on an exact 25 ms grid, and a
    /// slow signal (1 Hz) comes through with its amplitude and without delay.
    @Test(arguments: [25.0, 50, 100, 200, 400, 800, 1000])
    func anyRateLandsOnTheFortyHertzGrid(rate: Double) throws {
        var r = try Resampler(inputRate: rate)
        let out = run(&r, sine(rate: rate, seconds: 20, hz: 1, jitter: 0.3))
        #expect(abs(Double(out.count) - 20 * 40) <= 2, "got \(out.count) samples")
        for (a, b) in zip(out, out.dropFirst()) { #expect(abs((b.time - a.time) - 0.025) < 1e-9) }
        // The filtered samples sit at the mean time of what they average, so there is no delay
        // to allow for: compare with the true signal at the output time.
        let worst = out.dropFirst(4).map { abs($0.x - sin(2 * .pi * ($0.time - 100))) }.max() ?? 1
        #expect(worst < 0.03, "worst error \(worst) at \(rate) Hz")
        #expect(r.gaps == 0 && r.outOfOrder == 0)
    }

    @Test func averagesAwayContentAboveTheOutputBand() throws {
        // 40 Hz vibration sampled at 800 Hz: the 25 ms moving average has a null there.
        var r = try Resampler(inputRate: 800)
        let out = run(&r, sine(rate: 800, seconds: 5, hz: 40))
        let worst = out.dropFirst(2).map { abs($0.x) }.max() ?? 1
        #expect(worst < 0.02)
    }

    /// The gyroscope's angular velocity goes through the same filter and interpolation (issue 35).
    @Test(arguments: [40.0, 50, 100, 200])
    func angularVelocityIsResampledLikeTheAcceleration(rate: Double) throws {
        var r = try Resampler(inputRate: rate)
        let input = sine(rate: rate, seconds: 5, hz: 0.7).map { s in
            var s = s
            s.gyro = AngularVelocity(x: 100 * s.x, y: -3, z: 50 * (s.time - 100))
            return s
        }
        let out = run(&r, input)
        #expect(out.count > 150)
        for s in out {
            let g = try #require(s.gyro)
            #expect(abs(g.x - 100 * s.x) < 1e-6 && abs(g.y + 3) < 1e-9 && abs(g.z - 50 * (s.time - 100)) < 0.02 * 50 + 1e-6,
                    "\(s)")
        }
        var plain = try Resampler(inputRate: rate)
        #expect(run(&plain, input.map(\.accelerometerOnly)).allSatisfy { $0.gyro == nil })
    }

    @Test func gapsAreCountedNotBridged() throws {
        var r = try Resampler(inputRate: 100, maximumGap: 0.25)
        var input = sine(rate: 100, seconds: 4, hz: 1)
        input.removeSubrange(150..<250)   // one second missing
        let out = run(&r, input)
        #expect(r.gaps == 1)
        #expect(r.missingOutputs >= 38 && r.missingOutputs <= 41, "\(r.missingOutputs)")
        // No output sample inside the gap.
        #expect(!out.contains { $0.time > 101.51 && $0.time < 102.49 })
    }

    @Test func samplesThatDoNotAdvanceAreDropped() throws {
        var r = try Resampler(inputRate: 40)
        let a = AccelerationSample(time: 1, x: 0, y: 0, z: 1)
        var out: [AccelerationSample] = []
        r.process(a) { out.append($0) }
        r.process(a) { out.append($0) }
        r.process(AccelerationSample(time: 0.5, x: 0, y: 0, z: 1)) { out.append($0) }
        r.process(AccelerationSample(time: .nan, x: 0, y: 0, z: 1)) { out.append($0) }
        #expect(r.outOfOrder == 3)
        #expect(out.count == 1)
    }

    @Test(arguments: [0.0, -40, .nan, .infinity, 1e12])
    func refusesRatesNoSensorRunsAt(rate: Double) {
        #expect(throws: ResamplerError.self) { try Resampler(inputRate: rate) }
    }

    @Test func aHugeGapIsCountedWithoutTrapping() throws {
        var r = try Resampler(inputRate: 40)
        _ = run(&r, [AccelerationSample(time: 0, x: 0, y: 0, z: 1), AccelerationSample(time: 1e300, x: 0, y: 0, z: 1),
                     AccelerationSample(time: 2e300, x: 0, y: 0, z: 1)])
        #expect(r.gaps == 2)
        #expect(r.missingOutputs == Int.max)
    }
}

#if canImport(Glibc)
import Glibc
#endif
