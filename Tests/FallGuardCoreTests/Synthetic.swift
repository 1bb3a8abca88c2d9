import FallGuardCore
#if canImport(Glibc)
import Glibc
import FallGuardTestSupport
#endif

/// Synthetic 40 Hz signals with known ground truth, built from simple physics.
enum Synthetic {
    /// Upright and still: gravity on -y, with sensor noise of about 0.01 g.
    static func standing(from t0: Double, seconds: Double, rng: inout SplitMix) -> [AccelerationSample] {
        (0..<Int(seconds * 40)).map { i in
            AccelerationSample(time: t0 + Double(i) / 40, x: noise(&rng), y: -1 + noise(&rng), z: noise(&rng))
        }
    }

    /// Walking or jogging: a vertical bounce of `amplitude` g at `cadence` steps per second.
    static func gait(from t0: Double, seconds: Double, cadence: Double, amplitude: Double, rng: inout SplitMix) -> [AccelerationSample] {
        (0..<Int(seconds * 40)).map { i in
            let t = Double(i) / 40
            let bounce = amplitude * max(-0.6, sin(2 * .pi * cadence * t))
            return AccelerationSample(time: t0 + t, x: 0.2 * sin(.pi * cadence * t) + noise(&rng),
                                      y: -1 - bounce + noise(&rng), z: 0.15 + noise(&rng))
        }
    }

    /// Standing, then 0.35 s of free fall, an impact of `peak` g, and lying on the back
    /// (gravity on z) without moving for `lying` seconds. Returns the samples and the impact time.
    static func fall(peak: Double = 6, lying: Double = 10, rng: inout SplitMix) -> (samples: [AccelerationSample], impact: Double) {
        var s = standing(from: 0, seconds: 6, rng: &rng)
        var t = 6.0
        for _ in 0..<14 {  // free fall: the sensor reads far below 1 g while it tips over
            let f = (t - 6) / 0.35
            s.append(AccelerationSample(time: t, x: 0.1 * f, y: -0.3 + 0.1 * f, z: 0.2 * f))
            t += 0.025
        }
        let impact = t
        for a in [peak * 0.6, peak, peak * 0.5, 2.0, 1.4] {
            s.append(AccelerationSample(time: t, x: 0.3 * a, y: -0.4 * a, z: 0.85 * a))
            t += 0.025
        }
        for i in 0..<Int(lying * 40) {
            s.append(AccelerationSample(time: t + Double(i) / 40, x: noise(&rng), y: -0.05 + noise(&rng), z: 1 + noise(&rng)))
        }
        return (s, impact)
    }

    static func noise(_ rng: inout SplitMix) -> Double { (rng.unit() - 0.5) * 0.02 }
}
