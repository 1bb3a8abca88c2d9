import FallGuardCore
import Foundation
import Testing

/// `HipDrop` (issue 35, the wall slide) on synthetic motion whose height change is known: the
/// strapdown pass must recover it through a turn of the trunk, a gyroscope offset and an
/// accelerometer scale error, as the real trials need (`WallSlideTests` for those).
@Suite struct HipDropTests {
    /// One still second, a smooth vertical move of `height` m (positive: down) over `seconds`
    /// while the trunk turns `turn` degrees about the sensor's x axis, then one still second.
    /// The sensor reads the specific force (gravity included, in g) in its own axes, scaled by
    /// `scale`, and the angular velocity plus a constant zero-rate offset `offset` (°/s).
    func movement(height: Double, seconds: Double, turn: Double, offset: Double = 0, scale: Double = 1)
        -> [(a: SIMD3<Double>, w: SIMD3<Double>)] {
        let still = HipDrop.still, moving = Int(seconds * detectorRate)
        let dt = 1 / detectorRate, T = Double(moving) * dt
        let rate = turn / Double(moving) * detectorRate   // °/s while moving
        var out: [(a: SIMD3<Double>, w: SIMD3<Double>)] = []
        var angle = 0.0   // the turn so far (rad): the pass integrates ω of the samples before
        for k in 0..<(still + moving + still) {
            let m = k - still
            var up = 1.0, w = 0.0
            if m >= 0 && m < moving {
                let tau = (Double(m) + 0.5) * dt / T
                // z(t) = -h (3τ² - 2τ³): at rest at both ends; z'' in g.
                up += -height * (6 - 12 * tau) / (T * T) / standardGravity
                w = rate
            }
            // World up is z; the body is turned `angle` about x: body = Rᵀ world.
            let a = SIMD3(0, sin(angle) * up, cos(angle) * up) * scale
            out.append((a, SIMD3(w + offset, offset, -offset)))
            angle += w * .pi / 180 * dt
        }
        return out
    }

    func drop(_ s: [(a: SIMD3<Double>, w: SIMD3<Double>)]) -> Double { HipDrop.measure(count: s.count) { s[$0] } }

    @Test(arguments: [0.3, 0.6, 0.9])
    func aVerticalMoveIsMeasured(height: Double) {
        #expect(abs(drop(movement(height: height, seconds: 3, turn: 0)) - height) < 0.02)
        #expect(abs(drop(movement(height: -height, seconds: 3, turn: 0)) + height) < 0.02, "standing up comes out negative")
    }

    @Test func theTurnTheOffsetAndTheScaleErrorAreTakenOut() {
        let d = drop(movement(height: 0.7, seconds: 4, turn: 35, offset: 3, scale: 1.02))
        #expect(abs(d - 0.7) < 0.03, "\(d)")
        // Without a move, a turn alone (slumping in place) drops nothing.
        let slump = drop(movement(height: 0, seconds: 2, turn: 40, offset: -2))
        #expect(abs(slump) < 0.03, "\(slump)")
    }

    /// Without a gyroscope: |a| - g is the vertical acceleration whatever the attitude, so a
    /// purely vertical move through a turn is measured as well, a scale error taken out by g at
    /// rest before and after; a turn alone drops nothing.
    @Test func theAccelerometerAloneMeasuresAVerticalMoveThroughATurn() {
        func alone(_ s: [(a: SIMD3<Double>, w: SIMD3<Double>)]) -> Double {
            HipDrop.measure(count: s.count, accelerometer: { s[$0].a })
        }
        for height in [0.3, 0.6, 0.9] {
            let d = alone(movement(height: height, seconds: 3, turn: 35, scale: 1.02))
            #expect(abs(d - height) < 0.03, "\(height): \(d)")
        }
        let slump = alone(movement(height: 0, seconds: 2, turn: 40))
        #expect(abs(slump) < 0.01, "\(slump)")
    }
}
