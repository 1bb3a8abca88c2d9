/// How the sensor sits on the body, from two still postures: `fallguard setup` asks the wearer to
/// stand still, then to lie on their back, and turns the two readings into `sensor.mount-matrix`.
///
/// The body frame is the one of the SisFall recordings the detector was tuned on: **y along the
/// body, toward the feet** (standing still reads y ≈ −1 g: an accelerometer measures the
/// reaction to gravity, which points up), **x out of the wearer's front** (lying still on the
/// back reads x ≈ +1 g) and z = x × y, to the wearer's left. SisFall's subjects all read y ≈ −1 g
/// standing; their x points forward for about half of them and backward for the others (the
/// board worn the other way round), which the matrix of such a board says (x and z negated).
///
/// Physics, no fitted constant: gravity read standing fixes the body's long axis in the board's
/// frame; gravity read lying on the back, minus its part along that axis, fixes the front; their
/// cross product the third axis. The rotation taking these three to the body frame's is the
/// mount matrix (rows: the body's x, y, z in the board's axes), applied as `body = M · board`.
public enum MountOrientation {
    /// A row-major 3 × 3 matrix, as `sensor.mount-matrix` holds it.
    public typealias Matrix = [[Double]]
    public typealias Vector = (x: Double, y: Double, z: Double)

    /// What standing still reads in the body frame (g).
    public static let standingReading: Vector = (0, -1, 0)
    /// What lying still on the back reads in the body frame (g).
    public static let lyingReading: Vector = (1, 0, 0)

    /// A posture is still when its samples' RMS distance from their mean is at most this (g):
    /// standing or lying still measures 0.01–0.04 g in the recordings (HAPT, SisFall), walking
    /// 0.2 g and more.
    public static let stillSpread = 0.08
    /// A still reading is gravity alone: 1 g, within what a sensor's offset and scale errors
    /// allow (the ADXL345's datasheet: ±0.15 g offset at worst on z).
    public static let gravityRange: ClosedRange<Double> = 0.8...1.2
    /// Standing and lying on the back are 90° apart; a reading nearer the standing one (or
    /// its opposite) than this is not lying down.
    public static let postureChange: ClosedRange<Double> = 55...125
    /// A matrix within this of a square one (the board's axes along the body's, each ±) is
    /// taken as that square one (degrees): the rest is how the wearer stood and lay, not how the
    /// board sits.
    public static let squareTolerance = 20.0
    /// Two matrices this close describe the same mounting (degrees): the check confirms it.
    public static let confirmTolerance = 20.0

    public static let identity: Matrix = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]

    /// A still posture: the mean of its samples (g) and how much they moved about it.
    public struct Posture: Sendable, Equatable {
        public var x: Double, y: Double, z: Double
        /// RMS distance of the samples from their mean (g).
        public var spread: Double
        public var count: Int

        public init(x: Double, y: Double, z: Double, spread: Double = 0, count: Int = 1) {
            (self.x, self.y, self.z, self.spread, self.count) = (x, y, z, spread, count)
        }

        /// The mean and spread of `samples` (their acceleration only).
        public init(samples: some Collection<AccelerationSample>) {
            let n = Double(max(1, samples.count))
            var m = (x: 0.0, y: 0.0, z: 0.0)
            for s in samples { m.x += s.x; m.y += s.y; m.z += s.z }
            m = (m.x / n, m.y / n, m.z / n)
            var sq = 0.0
            for s in samples { sq += (s.x - m.x) * (s.x - m.x) + (s.y - m.y) * (s.y - m.y) + (s.z - m.z) * (s.z - m.z) }
            self.init(x: m.x, y: m.y, z: m.z, spread: (sq / n).squareRoot(), count: samples.count)
        }

        public var vector: Vector { (x, y, z) }
        public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }
    }

    /// Why two readings give no orientation, in words for the person doing it.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case noSamples(posture: String)
        case moving(posture: String, spread: Double)
        case notGravity(posture: String, magnitude: Double)
        case notLyingDown(angle: Double)

        public var description: String {
            switch self {
            case let .noSamples(p): "no samples were read while \(p)"
            case let .moving(p, s): "the sensor moved while \(p) (\(MountOrientation.fixed(s, 3)) g RMS, at most \(MountOrientation.fixed(MountOrientation.stillSpread, 2)) g): keep still and try again"
            case let .notGravity(p, m): "the sensor read \(MountOrientation.fixed(m, 2)) g while \(p), not gravity's 1 g: is it fixed to the body and still?"
            case let .notLyingDown(a): "lying turned the sensor \(MountOrientation.fixed(a, 0))° from standing (\(MountOrientation.fixed(MountOrientation.postureChange.lowerBound, 0))–\(MountOrientation.fixed(MountOrientation.postureChange.upperBound, 0))° expected): lie flat on the back"
            }
        }
    }

    /// The orientation the two postures give: the exact rotation, and the square one it was
    /// taken as when within ``squareTolerance``.
    public struct Result: Sendable, Equatable {
        /// From the two readings as measured.
        public var exact: Matrix
        /// What to configure: the nearest square matrix when within ``squareTolerance``, else
        /// `exact` rounded to three decimals.
        public var matrix: Matrix
        /// Degrees between `exact` and the nearest square matrix.
        public var offSquare: Double
        /// Degrees between the standing and the lying reading.
        public var postureAngle: Double
    }

    /// Checks one still posture (`what`: "standing", "lying").
    public static func problem(_ p: Posture, _ what: String) -> Problem? {
        if p.count == 0 { return .noSamples(posture: what) }
        if p.spread > stillSpread { return .moving(posture: what, spread: p.spread) }
        if !gravityRange.contains(p.magnitude) { return .notGravity(posture: what, magnitude: p.magnitude) }
        return nil
    }

    /// The mount matrix from a still standing and a still lying-on-the-back reading, both in the
    /// board's own frame (no matrix applied).
    public static func derive(standing: Posture, lying: Posture) -> Swift.Result<Result, Problem> {
        if let p = problem(standing, "standing") ?? problem(lying, "lying") { return .failure(p) }
        let angle = angleDegrees(standing.vector, lying.vector)
        guard postureChange.contains(angle) else { return .failure(.notLyingDown(angle: angle)) }
        let up = normalized(standing.vector)          // the body's −y (head-ward reading) in board axes
        let along = dot(lying.vector, up)
        let front = normalized((lying.x - along * up.x, lying.y - along * up.y, lying.z - along * up.z))
        let left = cross(front, (-up.x, -up.y, -up.z))   // z = x × y
        let exact: Matrix = [[front.x, front.y, front.z], [-up.x, -up.y, -up.z], [left.x, left.y, left.z]]
        let (square, off) = nearestSquare(exact)
        let chosen = off <= squareTolerance ? square : exact.map { $0.map { ($0 * 1000).rounded() / 1000 } }
        return .success(Result(exact: exact, matrix: chosen, offSquare: off, postureAngle: angle))
    }

    /// The rotation between two orientation matrices, in degrees (0: the same).
    public static func angleBetween(_ a: Matrix, _ b: Matrix) -> Double {
        // trace(A · Bᵀ) = 1 + 2 cos θ for rotations A and B.
        var trace = 0.0
        for i in 0..<3 { for j in 0..<3 { trace += a[i][j] * b[i][j] } }
        return degrees(cosine: (trace - 1) / 2)
    }

    /// The 24 rotations that put each board axis along a body axis (signed permutations with
    /// determinant +1).
    public static let squareRotations: [Matrix] = {
        var out: [Matrix] = []
        for p in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            for signs in 0..<8 {
                var m: Matrix = Array(repeating: [0, 0, 0], count: 3)
                for row in 0..<3 { m[row][p[row]] = (signs >> row) & 1 == 0 ? 1 : -1 }
                if determinant(m) > 0 { out.append(m) }
            }
        }
        return out
    }()

    /// The square rotation nearest `m`, and how far it is (degrees).
    public static func nearestSquare(_ m: Matrix) -> (Matrix, Double) {
        squareRotations.map { ($0, angleBetween(m, $0)) }.min { $0.1 < $1.1 }!
    }

    /// `m · v`.
    public static func apply(_ m: Matrix, _ v: Vector) -> Vector {
        (m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
         m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
         m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z)
    }

    public static func determinant(_ m: Matrix) -> Double {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    }

    /// How a matrix reads in the configuration file: `[[1, 0, 0], [0, 0, -1], [0, 1, 0]]`.
    public static func text(_ m: Matrix) -> String {
        "[" + m.map { "[" + $0.map { Int(exactly: $0).map(String.init) ?? String($0) }.joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
    }

    private static func dot(_ a: Vector, _ b: Vector) -> Double { a.x * b.x + a.y * b.y + a.z * b.z }
    private static func cross(_ a: Vector, _ b: Vector) -> Vector {
        (a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }
    private static func normalized(_ v: Vector) -> Vector {
        let n = dot(v, v).squareRoot()
        return n > 0 ? (v.x / n, v.y / n, v.z / n) : (0, 0, 0)
    }
    fileprivate static func fixed(_ v: Double, _ places: Int) -> String {
        var p = 1.0
        for _ in 0..<places { p *= 10 }
        let r = (v * p).rounded() / p
        return places == 0 ? String(Int(r)) : String(r)
    }
}
