import Foundation
import FallGuardCore
import Testing
import FallGuardTestSupport

/// A fall the wearer gets up from (issue 35 item 4): the engine's side and the watch's.
@Suite struct RecoveredFallEngineTests {
    @Test func upAgainDuringTheCountdownIsARecoveredFallWithoutTheAlarm() throws {
        var e = AlertFixtures.counting(from: 2.5)
        let fx = e.handle(.wearerUp(after: 6.2), at: 7)
        #expect(e.status == .monitoring, "the countdown ends")
        let alert = try #require(fx.alerts.first)
        #expect(fx.alerts.count == 1 && alert.kind == .recoveredFall && alert.severity == .information)
        #expect(alert.incident == "FG-1" && alert.recoveredAfter == 6.2 && alert.fall != nil)
        #expect(fx.events.map(\.event) == [.recoveredFall], "\(fx.events)")
        #expect(fx.events.first?.detail.contains("up again 6.2 s after the fall, 4.5 s into the countdown") == true, "\(fx.events)")
        #expect(fx.sounds.last == .silent, "no siren: \(fx.sounds)")
        #expect(fx.disarmed.isEmpty, "the stored fall alert is replaced by the recovered fall's, not cancelled")
        // The deadline passes: nothing else goes out.
        #expect(e.advance(to: 40).alerts.isEmpty)
        // The wearer can still call for help.
        _ = e.handle(.buttonPressed, at: 41)
        let help = e.advance(to: 43.1)
        #expect(help.alerts.map(\.kind) == [.helpRequested], "\(help)")
    }

    @Test func withRecoveredFallOffTheAlarmGoesOutAnyway() throws {
        var e = AlertFixtures.counting(from: 2.5, try .testing(recoveredFall: false))
        let fx = e.handle(.wearerUp(after: 6.2), at: 7)
        #expect(fx.alerts.isEmpty && e.status == .countdown)
        #expect(fx.events.map(\.event) == [.wearerUp], "\(fx.events)")
        #expect(e.advance(to: 33).alerts.map(\.kind) == [.fall])
    }

    @Test func upAgainOutsideACountdownChangesNothing() {
        var idle = AlertFixtures.engine()
        #expect(idle.handle(.wearerUp(after: 3), at: 1).isEmpty && idle.status == .monitoring)
        var out = AlertFixtures.alertOut()
        let fx = out.handle(.wearerUp(after: 40), at: 31)
        #expect(fx.isEmpty && out.status == .alertOut, "the alarm is out: someone is coming, the wearer can press \"I'm OK\"")
    }
}

@Suite struct RecoveryWatchTests {
    static func sample(_ t: Double, _ v: (Double, Double, Double)) -> AccelerationSample {
        AccelerationSample(time: t, x: v.0, y: v.1, z: v.2)
    }

    /// Standing (gravity on x), lying on the floor for 3 s, then standing again.
    @Test func upAfterOneUprightSecond() throws {
        var fall = AlertFixtures.fall(impact: 10)
        fall.gravityBefore = [60, 0, 2]   // a sum over 60 samples: only its direction matters
        var w = try #require(RecoveryWatch(after: fall))
        var upAt: Double?
        for k in 0..<(40 * 8) {
            let t = 12.5 + Double(k) / 40
            let lying = t < 15.5
            if w.process(Self.sample(t, lying ? (0.1, 0.2, 0.97) : (0.98, 0.1, 0.05))) { upAt = t }
        }
        let at = try #require(upAt)
        // Upright from 15.5 s: four whole 250 ms means later (blocks start at 12.5 s).
        #expect(at >= 16.45 && at <= 16.8, "\(at)")
        #expect(abs((w.upAfter ?? 0) - (at - 10)) < 1e-9)
    }

    @Test func tiltedHalfWayIsNotUp() throws {
        var fall = AlertFixtures.fall()
        fall.gravityBefore = [1, 0, 0]
        var w = try #require(RecoveryWatch(after: fall))
        // 45° from upright (sitting slumped against something): not up.
        let fired = (0..<400).contains { k in w.process(Self.sample(Double(k) / 40, (0.707, 0, 0.707))) }
        #expect(!fired && w.upAfter == nil)
    }

    /// A wall slide leaves the wearer sitting against the wall: 25° from standing (under 35°)
    /// and still is a faint, not someone up again; the same posture after a turn is.
    @Test func afterAWallSlideTheWearerMustHaveMovedToBeUpAgain() throws {
        var fall = AlertFixtures.fall(impact: 10)
        fall.gravityBefore = [1, 0, 0]
        let slumped = (cos(25 * Double.pi / 180), 0.0, sin(25 * Double.pi / 180))
        func run(_ phases: [String], turnAt: Double?) throws -> Double? {
            fall.phases = phases
            var w = try #require(RecoveryWatch(after: fall))
            for k in 0..<(40 * 20) {
                let t = 12 + Double(k) / 40
                let turning = turnAt.map { t >= $0 && t < $0 + 0.5 } ?? false
                let s = AccelerationSample(time: t, x: slumped.0, y: slumped.1, z: slumped.2,
                                           gyro: AngularVelocity(x: turning ? 40 : 1.5, y: -1, z: 0.5))
                if w.process(s) { return t }
            }
            return nil
        }
        #expect(try run(["soft-impact", "posture-change", "stillness", "wall-slide"], turnAt: nil) == nil,
                "20 s still at 25°: no recovery after a wall slide")
        let moved = try #require(try run(["soft-impact", "posture-change", "stillness", "wall-slide"], turnAt: 20))
        #expect(moved >= 20.9 && moved <= 21.3, "the upright second counts from the turn on (20 s): \(moved)")
        let plain = try #require(try run(["soft-impact", "posture-change", "stillness"], turnAt: nil))
        #expect(plain <= 13.1, "any other detection: posture alone, as before (\(plain))")
    }

    @Test func aDetectionWithoutAPostureCannotBeWatched() {
        #expect(RecoveryWatch(after: AlertFixtures.fall()) == nil, "the threshold detectors measure no posture")
    }
}
