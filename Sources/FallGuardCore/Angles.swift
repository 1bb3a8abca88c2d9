/// Angles between mean acceleration vectors: how the detectors measure posture and turns.

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
