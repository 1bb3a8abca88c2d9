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

    /// An older person's soft fall: sitting still (trunk 20° back), a slow slump of 0.75 s that
    /// tips the trunk by `tilt` degrees while |a| dips to 0.85 g, a soft impact whose 125 ms mean
    /// of |a| is `peak` g, then `still` seconds without moving and (optionally) `moving` seconds
    /// of getting up again (a 1.2 g swing at 1.5 Hz). Returns the samples and the impact time.
    /// `fidget` g of 2 Hz movement while sitting (0: sitting quietly, a calm start).
    /// - turn: seconds the trunk takes to turn by `tilt` before the impact: half a second for a
    ///   slump (a toppling trunk), 1.5 s or more for sitting or lying down under control.
    static func slump(peak: Double = 1.5, tilt: Double = 80, still: Double = 10, moving: Double = 0, fidget: Double = 0,
                      turn: Double = 0.5, rng: inout SplitMix) -> (samples: [AccelerationSample], impact: Double) {
        func gravity(_ deg: Double) -> (Double, Double, Double) {
            let r = (20 + deg) * .pi / 180
            return (0, -cos(r), sin(r))
        }
        var s: [AccelerationSample] = []
        var t = 0.0
        func add(_ v: (Double, Double, Double), scale: Double) {
            s.append(AccelerationSample(time: t, x: scale * v.0 + noise(&rng), y: scale * v.1 + noise(&rng), z: scale * v.2 + noise(&rng)))
            t += 0.025
        }
        for i in 0..<240 { add(gravity(0), scale: 1 + fidget * sin(2 * .pi * 2 * Double(i) / 40)) }   // 6 s sitting
        let turning = max(1, Int((turn * 40).rounded()))
        for i in 0..<turning { add(gravity(tilt * Double(i + 1) / Double(turning)), scale: 0.85) }   // the slump
        let impact = t
        for _ in 0..<5 { add(gravity(tilt), scale: peak) }                  // soft impact
        for _ in 0..<Int(still * 40) { add(gravity(tilt), scale: 1) }       // lying or slumped, still
        for i in 0..<Int(moving * 40) {                                     // getting up
            let phase = sin(2 * .pi * 1.5 * Double(i) / 40)
            add(gravity(tilt * (1 - min(1, Double(i) / 40))), scale: 1 + 0.2 * phase)
        }
        return (s, impact)
    }

    /// The samples rotated by `degrees` about the axis (x, y, z): a different mounting.
    static func rotated(_ samples: [AccelerationSample], axis: (Double, Double, Double), degrees: Double) -> [AccelerationSample] {
        let n = (axis.0 * axis.0 + axis.1 * axis.1 + axis.2 * axis.2).squareRoot()
        let (ux, uy, uz) = (axis.0 / n, axis.1 / n, axis.2 / n)
        let c = cos(degrees * .pi / 180), s = sin(degrees * .pi / 180)
        return samples.map { p in
            let d = ux * p.x + uy * p.y + uz * p.z
            let cx = uy * p.z - uz * p.y, cy = uz * p.x - ux * p.z, cz = ux * p.y - uy * p.x
            return AccelerationSample(time: p.time, x: p.x * c + cx * s + ux * d * (1 - c),
                                      y: p.y * c + cy * s + uy * d * (1 - c), z: p.z * c + cz * s + uz * d * (1 - c))
        }
    }

    static func noise(_ rng: inout SplitMix) -> Double { (rng.unit() - 0.5) * 0.02 }
}
