/// The last few seconds of samples in a fixed ring, allocated once, so detectors can look
/// back at windows before and after an event without allocating on the sample path.
public struct SampleHistory: Sendable {
    private var xs: [Double]
    private var ys: [Double]
    private var zs: [Double]
    private var mags: [Double]
    public let capacity: Int
    /// Index (since the last reset) of the next sample to be appended.
    public private(set) var count = 0

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        xs = Array(repeating: 0, count: capacity)
        ys = xs
        zs = xs
        mags = xs
    }

    @inline(__always)
    public mutating func append(_ s: AccelerationSample, magnitude: Double) {
        let k = count % capacity
        xs[k] = s.x
        ys[k] = s.y
        zs[k] = s.z
        mags[k] = magnitude
        count += 1
    }

    public mutating func reset() { count = 0 }

    /// The oldest sample index still held.
    public var oldest: Int { max(0, count - capacity) }

    @inline(__always) public func magnitude(at i: Int) -> Double { mags[i % capacity] }

    /// Mean vector over sample indices `range` (clamped to what is held); nil if none held.
    public func meanVector(_ range: Range<Int>) -> (x: Double, y: Double, z: Double)? {
        let lo = max(range.lowerBound, oldest), hi = min(range.upperBound, count)
        guard lo < hi else { return nil }
        var x = 0.0, y = 0.0, z = 0.0
        for i in lo..<hi {
            let k = i % capacity
            x += xs[k]
            y += ys[k]
            z += zs[k]
        }
        let n = Double(hi - lo)
        return (x / n, y / n, z / n)
    }

    /// Standard deviation of the magnitude over `range` (clamped); nil if fewer than 2 held.
    public func magnitudeDeviation(_ range: Range<Int>) -> Double? {
        let lo = max(range.lowerBound, oldest), hi = min(range.upperBound, count)
        guard hi - lo >= 2 else { return nil }
        var sum = 0.0, sq = 0.0
        for i in lo..<hi {
            let m = mags[i % capacity]
            sum += m
            sq += m * m
        }
        let n = Double(hi - lo)
        let mean = sum / n
        return max(0, sq / n - mean * mean).squareRoot()
    }

    /// Minimum and maximum magnitude over `range` (clamped); nil if none held.
    public func magnitudeExtremes(_ range: Range<Int>) -> (min: Double, max: Double)? {
        let lo = max(range.lowerBound, oldest), hi = min(range.upperBound, count)
        guard lo < hi else { return nil }
        var mn = Double.infinity, mx = -Double.infinity
        for i in lo..<hi {
            let m = mags[i % capacity]
            mn = min(mn, m)
            mx = max(mx, m)
        }
        return (mn, mx)
    }
}

/// Angle between two vectors, in degrees (0 when either is zero).
@inlinable
public func angleDegrees(_ a: (x: Double, y: Double, z: Double), _ b: (x: Double, y: Double, z: Double)) -> Double {
    let na = (a.x * a.x + a.y * a.y + a.z * a.z).squareRoot()
    let nb = (b.x * b.x + b.y * b.y + b.z * b.z).squareRoot()
    guard na > 0, nb > 0 else { return 0 }
    return degrees(cosine: (a.x * b.x + a.y * b.y + a.z * b.z) / (na * nb))
}

/// The angle whose cosine is `c` (clamped to ±1), in degrees.
@inlinable
public func degrees(cosine c: Double) -> Double {
    acos(max(-1, min(1, c))) * 180 / .pi
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
