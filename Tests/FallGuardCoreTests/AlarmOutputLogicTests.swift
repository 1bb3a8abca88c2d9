import FallGuardCore
import Foundation
import Testing
import FallGuardTestSupport

/// Buzzer/LED schedules and the button's debounce and press classification (pure).
@Suite struct PatternSequencerTests {
    let ms: Int64 = 1_000_000

    /// Every level change over `until` ns, starting with what `play` returned.
    func edges(_ s: inout PatternSequencer, until end: Int64) -> [(Int64, Bool)] {
        var out: [(Int64, Bool)] = []
        while let n = s.nextChange(), n.time <= end {
            s.advance(to: n.time)
            out.append((n.time, n.on))
        }
        return out
    }

    @Test func aContinuousPatternHasEveryEdgeAtAnExactOffsetFromItsStart() {
        var s = PatternSequencer()
        let start: Int64 = 5_000 * ms + 123
        #expect(s.play(OnOffPattern(onMs: 200, offMs: 800), oneShot: false, at: start) == true)
        let e = edges(&s, until: start + 100_000 * ms)
        #expect(e.count == 200)
        for (i, (t, on)) in e.enumerated() {
            let k = Int64(i + 1)
            let expected = start + (k / 2) * 1000 * ms + (k % 2 == 1 ? 200 * ms : 0)
            #expect(t == expected && on == (k % 2 == 0))
        }
    }

    @Test func burstsWithAPauseRepeat() {
        var s = PatternSequencer()
        s.play(OnOffPattern(onMs: 50, offMs: 150, count: 3, pauseMs: 400), oneShot: false, at: 0)
        let ons = edges(&s, until: 2000 * ms).filter { $0.1 }.map { $0.0 / ms }
        #expect(ons == [200, 400, 1000, 1200, 1400, 2000])
    }

    @Test func aOneShotFinishesBeforeTheNextContinuousPatternStarts() {
        var s = PatternSequencer()
        s.play(OnOffPattern(onMs: 200, offMs: 800), oneShot: false, at: 0)
        s.advance(to: 100 * ms)
        s.play(OnOffPattern(onMs: 60, offMs: 60, count: 2), oneShot: true, at: 100 * ms)
        s.play(OnOffPattern(onMs: 100, offMs: 100), oneShot: false, at: 110 * ms)
        #expect(s.isPlayingOneShot)
        let e = edges(&s, until: 700 * ms).map { ($0.0 / ms, $0.1) }
        // the chirp from 100 ms (on already), off 160, on 220, off 280; the new pattern at 340.
        #expect(e.map(\.0) == [160, 220, 280, 340, 440, 540, 640])
        #expect(e.map(\.1) == [false, true, false, true, false, true, false])
    }

    @Test func silenceAndSteadyNeverChange() {
        var s = PatternSequencer()
        #expect(s.play(.off, oneShot: false, at: 0) == nil)
        #expect(s.nextChange() == nil)
        #expect(s.play(.steady, oneShot: false, at: 10) == true)
        #expect(s.nextChange() == nil && s.level)
        #expect(s.play(.off, oneShot: false, at: 20) == false)
    }

    @Test func aOneShotAloneEndsOff() {
        var s = PatternSequencer()
        s.play(OnOffPattern(onMs: 500, offMs: 100, count: 3), oneShot: true, at: 0)
        let e = edges(&s, until: 10_000 * ms)
        #expect(e.count == 5 && e.last! == (1700 * ms, false))
    }

    @Test func patternsDescribeThemselves() {
        // Their range checks: FallGuardConfigTests' AlarmAndGPIOSectionTests.
        #expect(OnOffPattern(onMs: 50, offMs: 150, count: 3, pauseMs: 9400).description == "50/150 ms ×3 + 9400 ms")
        #expect(OnOffPattern.off.description == "off" && OnOffPattern.steady.description == "steady")
    }
}

@Suite struct ButtonDebouncerTests {
    let ms: Int64 = 1_000_000

    func run(_ d: inout ButtonDebouncer, _ edges: [(Bool, Int64)], until end: Int64) -> [ButtonEvent] {
        var out: [ButtonEvent] = []
        for (level, t) in edges { out += d.edge(pressed: level, at: t) }
        out += d.advance(to: end)
        return out
    }

    @Test func tenBouncesInFiveMillisecondsAreOnePressAtTheLastEdge() {
        var d = ButtonDebouncer()
        // press with 10 edges 0.5 ms apart ending pressed (odd count), release 300 ms later with bounce.
        var e: [(Bool, Int64)] = (0..<11).map { ($0 % 2 == 0, 1000 * ms + Int64($0) * ms / 2) }
        e += (0..<5).map { ($0 % 2 == 1 ? true : false, 1300 * ms + Int64($0) * ms / 2) }
        let events = run(&d, e, until: 2000 * ms)
        #expect(events == [.pressed(at: 1005 * ms),
                           .released(at: 1302 * ms, duration: 297 * ms, long: false)])
    }

    @Test func aGlitchShorterThanTheDebounceIsNothing() {
        var d = ButtonDebouncer()
        let events = run(&d, [(true, 100 * ms), (false, 129 * ms)], until: 1000 * ms)
        #expect(events.isEmpty && !d.isPressed)
    }

    @Test func theLongPressBoundaryIsTwoSeconds() {
        var d = ButtonDebouncer()
        let short = run(&d, [(true, 0), (false, 1999 * ms)], until: 5000 * ms)
        #expect(short == [.pressed(at: 0), .released(at: 1999 * ms, duration: 1999 * ms, long: false)])
        var d2 = ButtonDebouncer()
        let long = run(&d2, [(true, 0), (false, 2000 * ms)], until: 5000 * ms)
        #expect(long == [.pressed(at: 0), .held(at: 2000 * ms), .released(at: 2000 * ms, duration: 2000 * ms, long: true)])
    }

    @Test func heldIsReportedWhileStillDownAtTheThreshold() {
        var d = ButtonDebouncer(debounce: 30 * ms, longPress: 2000 * ms)
        _ = d.edge(pressed: true, at: 0)
        #expect(d.nextDeadline == 30 * ms)
        #expect(d.advance(to: 30 * ms) == [.pressed(at: 0)])
        #expect(d.nextDeadline == 2000 * ms)
        #expect(d.advance(to: 2000 * ms) == [.held(at: 2000 * ms)])
        #expect(d.nextDeadline == nil)
    }

    @Test func aButtonHeldAtStartUpCountsOnlyAfterItIsReleased() {
        var d = ButtonDebouncer(initiallyPressed: true, at: 0)
        #expect(d.advance(to: 10_000 * ms).isEmpty)
        let e = run(&d, [(false, 11_000 * ms), (true, 12_000 * ms), (false, 12_100 * ms)], until: 13_000 * ms)
        #expect(e == [.pressed(at: 12_000 * ms), .released(at: 12_100 * ms, duration: 100 * ms, long: false)])
    }
}
