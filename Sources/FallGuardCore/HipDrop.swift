/// How far the hip went down between two still seconds, by strapdown inertial navigation of the
/// accelerometer and the gyroscope (issue 35, the faint sliding down a wall): the port of
/// `tools/detector-research/wallslide.py`'s `segment_drop`, no fitted constant.
///
/// Samples `0..<count` at 40 Hz: `[0, 40)` is the last still second before the movement (A),
/// `[count - 40, count)` the first still second after it (B). Then:
/// * the gyroscope's zero-rate offset is its mean over both still seconds;
/// * the attitude starts from gravity's direction over A (the world's up) and the gyroscope
///   (minus the offset) carries it sample by sample (Rodrigues);
/// * each acceleration is rotated to the world frame and g subtracted, g going linearly from |a|
///   at rest over A to |a| over B across the movement (a per-axis scale or offset error makes
///   them differ once the device has turned);
/// * the gyroscope's tilt error at B (where it carries gravity against where the accelerometer
///   sees it) is spread linearly over the movement as a world-frame rotation, and the vertical
///   acceleration is computed again with it (a second pass);
/// * integrated to velocity with a linear correction that makes the mean velocity zero over A
///   and over B (zero-velocity updates), and again to height: drop = height at A's end minus
///   height at B's start, in metres (positive: down).
///
/// Two bounded passes over `count` samples, no allocation (the double integral is kept as the
/// few sums its closed form needs). Without a gyroscope, ``measure(count:accelerometer:)``
/// takes |a| - g as the vertical acceleration: one pass, the same zero-velocity updates.
public enum HipDrop {
    /// One still second, in samples at 40 Hz.
    public static let still = 40
    /// The largest drop that is a measurement (m): the hip cannot go down further than its
    /// height standing (~1.0-1.1 m); a larger figure is a failed integration.
    public static let cap = 1.2

    /// The drop (m) over `count` samples (at least two still seconds); `sample(i)` gives the
    /// acceleration (g) and the angular velocity (°/s) of sample `i`.
    public static func measure(count: Int, _ sample: (Int) -> (a: SIMD3<Double>, w: SIMD3<Double>)) -> Double {
        let w = still
        precondition(count >= 2 * w)
        let b0 = count - w, a1 = w
        let dt = 1 / detectorRate
        var bias = SIMD3<Double>(repeating: 0), upSum = bias, endSum = bias
        var gA = 0.0, gB = 0.0
        for i in 0..<w {
            let s = sample(i), e = sample(b0 + i)
            bias += s.w + e.w
            upSum += s.a; endSum += e.a
            gA += length(s.a); gB += length(e.a)
        }
        bias *= .pi / 180 / Double(2 * w)
        gA /= Double(w); gB /= Double(w)
        let up = upSum / length(upSum), end = endSum / length(endSum)
        // The fraction of the movement done at sample k: 0 over A, 1 from B's start.
        let span = Double(max(1, b0 - a1))
        func fraction(_ k: Int) -> Double { min(1, max(0, Double(k - a1) / span)) }

        // Pass 1: where the gyroscope carries gravity by the end.
        var R = Matrix3.identity
        for k in 0..<count { R = R * Matrix3.rotation((sample(k).w * (.pi / 180) - bias) * dt) }
        let carried = R * end
        let axis = cross(carried, up)
        let fix = length(axis) > 1e-9 ? axis / length(axis) * atan2(length(axis), dot(carried, up)) : SIMD3<Double>(repeating: 0)

        // Pass 2: the vertical acceleration with the tilt correction. The correction is a
        // rotation about one axis growing linearly in time: one step per sample of the movement
        // (C = rotation(fix × fraction(k)) without a sine per sample).
        let step = Matrix3.rotation(fix / span)
        var C = Matrix3.identity
        R = .identity
        return integrate(count: count) { k in
            let s = sample(k)
            let world = C * (R * s.a)
            if k >= a1 && k < b0 { C = C * step }
            R = R * Matrix3.rotation((s.w * (.pi / 180) - bias) * dt)
            return dot(world, up) - (gA + (gB - gA) * fraction(k))
        }
    }

    /// The drop (m) over `count` samples (at least two still seconds) from the accelerometer
    /// alone (an ADXL345): to first order the vertical acceleration is |a| - g, whatever the
    /// attitude (|g + a| = g + a·up + |a_h|²/2g: the horizontal part enters squared, a few
    /// hundredths of a g in a slow slide). g goes linearly from |a| at rest over A to |a| over B,
    /// as in ``measure(count:_:)``; no gyroscope offset, no tilt to correct. One pass.
    public static func measure(count: Int, accelerometer a: (Int) -> SIMD3<Double>) -> Double {
        let w = still
        precondition(count >= 2 * w)
        let b0 = count - w
        var gA = 0.0, gB = 0.0
        for i in 0..<w {
            gA += length(a(i)); gB += length(a(b0 + i))
        }
        gA /= Double(w); gB /= Double(w)
        let span = Double(max(1, b0 - w))
        return integrate(count: count) { k in
            length(a(k)) - (gA + (gB - gA) * min(1, max(0, Double(k - w) / span)))
        }
    }

    /// The double integral of `vertical(k)` (g, called once for each k in order from 0) with
    /// the zero-velocity updates over both still seconds: velocity with a linear correction that
    /// makes its mean zero over A and over B, then height; the drop is the height at A's end
    /// minus the height at B's start (m, positive: down). Kept as the few sums its closed form
    /// needs, no allocation.
    private static func integrate(count: Int, _ vertical: (Int) -> Double) -> Double {
        let w = still, b0 = count - w
        let dt = 1 / detectorRate
        var v = 0.0, sumA = 0.0, sumB = 0.0, sumMove = 0.0
        for k in 0..<count {
            v += vertical(k) * standardGravity * dt
            if k < w { sumA += v }
            if k >= b0 { sumB += v }
            if k >= w && k <= b0 { sumMove += v }
        }
        // v' = v - (vA + (vB - vA)(t - tA)/(tB - tA)); drop = -dt Σ v' over samples w...b0.
        let vA = sumA / Double(w), vB = sumB / Double(w)
        let tA = Double(w - 1) / 2, tB = Double(b0 + count - 1) / 2   // in samples
        let n = Double(b0 - w + 1)
        let sumT = Double(w + b0) / 2 * n   // Σ j for j in w...b0
        let correction = vA * n + (vB - vA) * (sumT - n * tA) / (tB - tA)
        return -(sumMove - correction) * dt
    }

    @inline(__always) static func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }
    @inline(__always) static func dot(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { (a * b).sum() }
    @inline(__always) static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }
}

/// A 3×3 matrix by rows, for the strapdown pass.
struct Matrix3 {
    var r0: SIMD3<Double>, r1: SIMD3<Double>, r2: SIMD3<Double>

    static let identity = Matrix3(r0: SIMD3(1, 0, 0), r1: SIMD3(0, 1, 0), r2: SIMD3(0, 0, 1))

    /// The rotation by the rotation vector `v` (radians), Rodrigues: I + sin θ K + (1 - cos θ) K²
    /// = cos θ I + sin θ K + (1 - cos θ) k kᵀ (K the cross-product matrix of the unit axis k).
    static func rotation(_ v: SIMD3<Double>) -> Matrix3 {
        let theta = HipDrop.length(v)
        guard theta > 0 else { return identity }
        let k = v / theta, s = sin(theta), cs = cos(theta), c = 1 - cs
        return Matrix3(r0: SIMD3(cs + c * k.x * k.x, c * k.x * k.y - s * k.z, c * k.x * k.z + s * k.y),
                       r1: SIMD3(c * k.y * k.x + s * k.z, cs + c * k.y * k.y, c * k.y * k.z - s * k.x),
                       r2: SIMD3(c * k.z * k.x - s * k.y, c * k.z * k.y + s * k.x, cs + c * k.z * k.z))
    }

    static func * (m: Matrix3, v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(HipDrop.dot(m.r0, v), HipDrop.dot(m.r1, v), HipDrop.dot(m.r2, v))
    }

    static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        func row(_ r: SIMD3<Double>) -> SIMD3<Double> { r.x * b.r0 + r.y * b.r1 + r.z * b.r2 }
        return Matrix3(r0: row(a.r0), r1: row(a.r1), r2: row(a.r2))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
