import FallGuardCore
import Foundation
import Testing
import FallGuardTestSupport

/// `sensor.mount-matrix` from standing still and lying on the back (issue 39, `fallguard setup`),
/// on real recordings whose postures are known: SisFall SA11's D13 (stands 0–2.5 s, lies on the
/// back 4–6 s, ADXL345 at the waist) and HAPT person 11's session 2 (labelled standing 62–79 s,
/// lying 84–100 s, a phone on the belt in another frame).
@Suite struct MountOrientationTests {
    typealias M = MountOrientation

    /// `t_s` (or the row number at `rate`) and the three axes of a fixture CSV, within [from, to).
    static func posture(_ path: String, from: Double, to: Double, rate: Double = 40) throws -> M.Posture {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let header = lines[0].split(separator: ",").map(String.init)
        let t = header.firstIndex(of: "t_s"), x = header.firstIndex(of: "x_g")!
        var samples: [AccelerationSample] = []
        for (i, line) in lines.dropFirst().enumerated() {
            let v = line.split(separator: ",").map { Double($0)! }
            let time = t.map { v[$0] } ?? Double(i) / rate
            if time >= from, time < to { samples.append(AccelerationSample(time: time, x: v[x], y: v[x + 1], z: v[x + 2])) }
        }
        return M.Posture(samples: samples)
    }

    static let sisfall = fixtureFolder + "/D13_SA11_R01.csv"
    static let hapt = dailyFixtureFolder + "/U11-exp2-55-100s.csv"

    static func close(_ a: M.Vector, _ b: M.Vector, within: Double) -> Bool {
        abs(a.x - b.x) <= within && abs(a.y - b.y) <= within && abs(a.z - b.z) <= within
    }

    @Test func sisFallsFrameIsConfirmedUpToWhichWayRoundTheBoardWasWorn() throws {
        let standing = try Self.posture(Self.sisfall, from: 0, to: 2.5)
        let lying = try Self.posture(Self.sisfall, from: 4, to: 6)
        #expect(standing.spread < M.stillSpread && lying.spread < M.stillSpread, "\(standing) \(lying)")
        let r = try M.derive(standing: standing, lying: lying).get()
        // y (along the body) is kept; SA11 wore the board with x to the back, so x and z turn.
        #expect(r.matrix == [[-1, 0, 0], [0, 1, 0], [0, 0, -1]], "\(r)")
        #expect(r.offSquare < 10, "\(r.offSquare)")
        #expect(abs(r.postureAngle - 91.5) < 1, "\(r.postureAngle)")
        #expect(Self.close(M.apply(r.exact, standing.vector), (0, -standing.magnitude, 0), within: 1e-9))
        let l = M.apply(r.matrix, lying.vector)
        #expect(Self.close(l, M.lyingReading, within: 0.05), "\(l)")
        #expect(abs(M.determinant(r.exact) - 1) < 1e-9)
    }

    /// The same real readings, as a board mounted in each of the 24 square ways would read them:
    /// the matrix found undoes each mounting.
    @Test func everySquareMountingIsRecovered() throws {
        let standing = try Self.posture(Self.sisfall, from: 0, to: 2.5)
        let lying = try Self.posture(Self.sisfall, from: 4, to: 6)
        let sa11 = try M.derive(standing: standing, lying: lying).get().matrix
        #expect(M.squareRotations.count == 24)
        for q in M.squareRotations {
            // A board whose frame is q · (SA11's board frame) reads q · v.
            func board(_ p: M.Posture) -> M.Posture {
                let v = M.apply(q, p.vector)
                return M.Posture(x: v.x, y: v.y, z: v.z, spread: p.spread, count: p.count)
            }
            let r = try M.derive(standing: board(standing), lying: board(lying)).get()
            // Expected: SA11's matrix after undoing q (qᵀ).
            let expected = (0..<3).map { i in (0..<3).map { j in (0..<3).reduce(0.0) { $0 + sa11[i][$1] * q[j][$1] } } }
            #expect(r.matrix == expected, "mounting \(q): \(r.matrix)")
        }
    }

    @Test func aPhoneOnTheBeltInHAPTsFrameIsTurnedIntoTheBodyFrame() throws {
        let standing = try Self.posture(Self.hapt, from: 62, to: 79)
        let lying = try Self.posture(Self.hapt, from: 84, to: 100)
        let r = try M.derive(standing: standing, lying: lying).get()
        // The phone's x points up the body, its y out of the front (lying reads y ≈ +1 g).
        #expect(r.matrix == [[0, 1, 0], [-1, 0, 0], [0, 0, 1]], "\(r)")
        #expect(r.offSquare > 5 && r.offSquare < M.squareTolerance, "\(r.offSquare)")
        #expect(Self.close(M.apply(r.matrix, standing.vector), M.standingReading, within: 0.2))
        #expect(Self.close(M.apply(r.matrix, lying.vector), M.lyingReading, within: 0.25))
        // Tilted further than the tolerance, the exact rotation is kept (rounded), not a square one.
        let tilt: M.Matrix = [[1, 0, 0], [0, cos(0.6), -sin(0.6)], [0, sin(0.6), cos(0.6)]]   // 34° about x
        func tilted(_ p: M.Posture) -> M.Posture {
            let v = M.apply(tilt, p.vector)
            return M.Posture(x: v.x, y: v.y, z: v.z, spread: p.spread, count: p.count)
        }
        let t = try M.derive(standing: tilted(standing), lying: tilted(lying)).get()
        #expect(t.offSquare > M.squareTolerance, "\(t.offSquare)")
        #expect(t.matrix != M.nearestSquare(t.exact).0)
        #expect(Self.close(M.apply(t.matrix, tilted(standing).vector), (0, -standing.magnitude, 0), within: 0.01))
        #expect(M.angleBetween(t.matrix, t.exact) < 1, "rounded to 0.001: \(M.angleBetween(t.matrix, t.exact))")
    }

    @Test func movingNotLyingAndNoGravityAreRefusedWithTheirReason() throws {
        let standing = try Self.posture(Self.sisfall, from: 0, to: 2.5)
        // 2.5–3.5 s: the wearer going down (the lie-down movement itself).
        let moving = try Self.posture(Self.sisfall, from: 2.5, to: 3.5)
        guard case .failure(.moving(posture: "lying", _)) = M.derive(standing: standing, lying: moving) else {
            Issue.record("a moving reading was accepted: \(moving)"); return
        }
        // Standing again (8–11 s) instead of lying.
        let again = try Self.posture(Self.sisfall, from: 8, to: 11)
        guard case let .failure(.notLyingDown(angle)) = M.derive(standing: standing, lying: again) else {
            Issue.record("standing twice was accepted"); return
        }
        #expect(angle < 15, "\(angle)")
        #expect(M.Problem.notLyingDown(angle: angle).description.contains("lie flat on the back"))
        let dropped = M.Posture(x: 0.1, y: 0.2, z: 0.1, spread: 0.01, count: 80)
        #expect(M.derive(standing: dropped, lying: again) == .failure(.notGravity(posture: "standing", magnitude: dropped.magnitude)))
        #expect(M.derive(standing: M.Posture(samples: [AccelerationSample]()), lying: again) == .failure(.noSamples(posture: "standing")))
    }

    @Test func confirmingCompares() {
        #expect(M.angleBetween(M.identity, M.identity) < 1e-9)
        #expect(abs(M.angleBetween(M.identity, [[-1, 0, 0], [0, 1, 0], [0, 0, -1]]) - 180) < 1e-6)
        #expect(abs(M.angleBetween(M.identity, [[1, 0, 0], [0, 0, -1], [0, 1, 0]]) - 90) < 1e-6)
        #expect(M.text([[1, 0, 0], [0, 0, -1], [0, 1, 0]]) == "[[1, 0, 0], [0, 0, -1], [0, 1, 0]]")
        #expect(M.text([[0.5, 0, 0], [0, 1, 0], [0, 0, 1]]) == "[[0.5, 0, 0], [0, 1, 0], [0, 0, 1]]")
        // A whole number too large for Int is written as a Double, not trapped on.
        #expect(M.text([[1e300, 0, 0], [0, 1e-300, 0], [0, 0, 1]]) == "[[1e+300, 0, 0], [0, 1e-300, 0], [0, 0, 1]]")
    }
}
