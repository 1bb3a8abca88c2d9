/// One reading of a tri-axial accelerometer, in units of standard gravity (g), gravity included.
///
/// `time` is seconds on a monotonic clock (a sensor timestamp, or the position in a recording).
/// At rest the vector norm is about 1 g.
public struct AccelerationSample: Sendable, Equatable {
    public var time: Double
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable
    public init(time: Double, x: Double, y: Double, z: Double) { (self.time, self.x, self.y, self.z) = (time, x, y, z) }

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
    }
}

/// Standard gravity in m/s², for converting IIO readings (m/s²) to g.
public let standardGravity = 9.80665

/// The detector's sample rate. The iOS thesis compared 10, 20, 40 and 100 Hz and chose 40.
public let detectorRate = 40.0
