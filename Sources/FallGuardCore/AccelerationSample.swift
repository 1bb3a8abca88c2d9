/// One reading of a tri-axial accelerometer, in units of standard gravity (g), gravity included.
///
/// `time` is seconds on a monotonic clock (a sensor timestamp, or the position in a recording).
/// At rest the vector norm is about 1 g. A six-axis sensor (the MPU6050) adds its gyroscope's
/// angular velocity about the same axes (`gyro`); a three-axis one (the ADXL345) has none.
/// A plain value of 64 bytes either way: no allocation, nothing to release.
public struct AccelerationSample: Sendable, Equatable {
    public var time: Double
    public var x: Double
    public var y: Double
    public var z: Double
    /// Angular velocity in degrees per second about the accelerometer's x, y, z (right-hand
    /// rule), or nil from a sensor without a gyroscope.
    public var gyro: AngularVelocity?

    @inlinable
    public init(time: Double, x: Double, y: Double, z: Double, gyro: AngularVelocity? = nil) {
        (self.time, self.x, self.y, self.z, self.gyro) = (time, x, y, z, gyro)
    }

    /// Euclidean norm of the acceleration vector, in g.
    @inlinable
    public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }

    /// |x| + |y| + |z| in g (the iOS thesis's feature).
    @inlinable
    public var sumOfAbsoluteAxes: Double { abs(x) + abs(y) + abs(z) }

    /// No accelerometer a wearer carries measures beyond this on an axis (g): the ADXL345 and
    /// MPU6050 stop at ±16 g. A larger value is a fault, not a reading.
    public static let physicalLimit = 64.0

    /// Every axis a finite number within ±``physicalLimit``.
    @inlinable
    public var isPhysical: Bool {
        abs(x) <= Self.physicalLimit && abs(y) <= Self.physicalLimit && abs(z) <= Self.physicalLimit
            && (gyro?.isPhysical ?? true)
    }

    /// The same sample without its angular velocity: what an accelerometer-only detector sees.
    @inlinable
    public var accelerometerOnly: AccelerationSample { AccelerationSample(time: time, x: x, y: y, z: z) }
}

/// A gyroscope's reading: angular velocity in degrees per second about the accelerometer's x,
/// y and z axes (right-hand rule), zero-rate offset included.
public struct AngularVelocity: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable
    public init(x: Double, y: Double, z: Double) { (self.x, self.y, self.z) = (x, y, z) }

    /// |ω| in degrees per second.
    @inlinable
    public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }

    /// No gyroscope a wearer carries measures beyond this (°/s): the MPU6050 and ITG3200 stop
    /// near ±2000 °/s. A larger value is a fault, not a reading.
    public static let physicalLimit = 10_000.0

    /// Every axis a finite number within ±``physicalLimit``.
    @inlinable
    public var isPhysical: Bool {
        abs(x) <= Self.physicalLimit && abs(y) <= Self.physicalLimit && abs(z) <= Self.physicalLimit
    }
}

/// Standard gravity in m/s², for converting IIO readings (m/s²) to g.
public let standardGravity = 9.80665

/// The detector's sample rate. The iOS thesis compared 10, 20, 40 and 100 Hz and chose 40.
public let detectorRate = 40.0
