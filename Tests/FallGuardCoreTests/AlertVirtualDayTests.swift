import FallGuardCore
import Testing
import FallGuardTestSupport

/// A whole day of virtual time: 53 scripted inputs over 86,400 s.
@Suite struct AlertVirtualDayTests {
    typealias Step = (time: Double, input: AlertInput)

    static let fall = AlertFixtures.fall()
    static let fault = AlertFixtures.fault

    static func press(_ t: Double, held: Double) -> [Step] {
        [(t, .buttonPressed), (t + held, .buttonReleased)]
    }

    /// The day, episode by episode, with what each one must dispatch (default configuration).
    static let script: [Step] = {
        var s: [Step] = []
        // 1. Fall, aborted at 10 s: FG-1 false alarm.
        s += [(1000, .fallSuspected(fall))] + press(1010, held: 0.3)
        // 2. Fall, alert at 3030, acknowledged by alice: FG-2.
        s += [(3000, .fallSuspected(fall)), (3100, .acknowledged(incidentID: "FG-2", by: "alice"))]
        // 3. Fall, repeat detection, alert, "I'm OK": FG-3.
        s += [(6000, .fallSuspected(fall)), (6010, .fallSuspected(fall))] + press(6200, held: 0.5)
        // 4. Long press while monitoring: help FG-4 at 9002; nobody answers, timeout at 12602.
        s += press(9000, held: 3)
        // 5. Sensor fault recovered within the grace period.
        s += [(14000, .sensorFault(fault)), (14030, .sensorRecovered)]
        // 6. Sensor fault past the grace period, another fault report, recovery.
        s += [(15000, .sensorFault(fault)), (15200, .sensorFault(SensorFault(.stalled, device: "iio:device0"))),
              (15500, .sensorRecovered)]
        // 7. Fall, the wearer walks (noted), alert, an unknown acknowledgement, bob acknowledges: FG-5.
        s += [(20000, .fallSuspected(fall)), (20005, .wearerActivity(walking: true)),
              (20040, .acknowledged(incidentID: "FG-99", by: "mallory")),
              (20100, .acknowledged(incidentID: "FG-5", by: "bob"))]
        // 8. A press with no incident.
        s += press(25000, held: 0.2)
        // 9. Fall, long press during the countdown (help at 30012 instead), then "I'm OK": FG-6.
        s += [(30000, .fallSuspected(fall))] + press(30010, held: 3) + press(30100, held: 0.2)
        // 10. Fault, a fall during it aborted, the fault reported at 40060, recovery: FG-7.
        s += [(40000, .sensorFault(fault)), (40010, .fallSuspected(fall))] + press(40015, held: 0.2)
            + [(40100, .sensorRecovered)]
        // 11. Fall, alert, a late acknowledgement of FG-2, a repeat detection, "I'm OK": FG-8.
        s += [(50000, .fallSuspected(fall)), (50040, .acknowledged(incidentID: "FG-2", by: "alice")),
              (50050, .fallSuspected(fall))] + press(50060, held: 0.1)
        // 12. Walking hints while monitoring: nothing.
        s += [(60000, .wearerActivity(walking: true)), (60001, .wearerActivity(walking: false))]
        // 13. Fall aborted at 29.9 s, in the final phase: FG-9.
        s += [(70000, .fallSuspected(fall))] + press(70029.8, held: 0.1)
        // 14. Fall, alert, nobody answers: timeout at 83630: FG-10.
        s += [(80000, .fallSuspected(fall))]
        // 15. An acknowledgement after the timeout.
        s += [(84000, .acknowledged(incidentID: "FG-10", by: "carol"))]
        // 16. Fault reported at 85060, a fall during it aborted, recovery: FG-11.
        s += [(85000, .sensorFault(fault)), (85100, .fallSuspected(fall))] + press(85105, held: 0.1)
            + [(86000, .sensorRecovered)]
        // 17. Fall late in the evening, the wearer walks, then aborts: FG-12.
        s += [(86300, .fallSuspected(fall)), (86310, .wearerActivity(walking: true))] + press(86312, held: 0.4)
        return s
    }()

    static let expectedDispatches: [(AlertKind, String)] = [
        (.fall, "FG-2"), (.acknowledged, "FG-2"),
        (.fall, "FG-3"), (.resolvedByWearer, "FG-3"),
        (.helpRequested, "FG-4"),
        (.deviceProblem, "FG-fault-2"), (.deviceRecovered, "FG-fault-2"),
        (.fall, "FG-5"), (.acknowledged, "FG-5"),
        (.helpRequested, "FG-6"), (.resolvedByWearer, "FG-6"),
        (.deviceProblem, "FG-fault-3"), (.deviceRecovered, "FG-fault-3"),
        (.fall, "FG-8"), (.resolvedByWearer, "FG-8"),
        (.fall, "FG-10"),
        (.deviceProblem, "FG-fault-4"), (.deviceRecovered, "FG-fault-4"),
    ]

    static let expectedEventCounts: [IncidentEvent.Kind: Int] = [
        .fallSuspected: 11, .repeatDetection: 2, .finalPhase: 6, .wearerWalking: 2, .falseAlarm: 5,
        .countdownExpired: 5, .helpRequested: 2, .resolvedByWearer: 3, .acknowledged: 2,
        .activeTimedOut: 2, .pressIgnored: 1, .acknowledgementIgnored: 3, .sensorFault: 5,
        .deviceProblem: 3, .sensorRecovered: 4,
    ]

    /// Like the daemon: sleeps until the next deadline or input, whichever is first.
    static func runDeadlineDriven() -> (engine: AlertEngine, effects: [AlertEffect], timerCalls: Int, emptyTimerCalls: Int) {
        var e = AlertEngine()
        var effects: [AlertEffect] = []
        var timerCalls = 0, empty = 0
        func runTimers(until t: Double) {
            while let d = e.nextDeadline, d <= t {
                let fx = e.advance(to: d)
                timerCalls += 1
                if fx.isEmpty { empty += 1 }
                effects += fx
            }
        }
        for step in script {
            runTimers(until: step.time)
            effects += e.handle(step.input, at: step.time)
        }
        runTimers(until: 86_400)
        effects += e.advance(to: 86_400)
        return (e, effects, timerCalls, empty)
    }

    @Test func aWholeDayRunsInMillisecondsWithTheExpectedAlerts() throws {
        #expect(Self.script.count == 53)
        #expect(Self.script.map(\.time) == Self.script.map(\.time).sorted(), "the script is in time order")

        let clock = ContinuousClock()
        var result: (engine: AlertEngine, effects: [AlertEffect], timerCalls: Int, emptyTimerCalls: Int)!
        let elapsed = clock.measure { result = Self.runDeadlineDriven() }
        #expect(elapsed < .milliseconds(500), "took \(elapsed)")

        let alerts = result.effects.alerts
        #expect(alerts.count == 18)
        #expect(alerts.map(\.kind) == Self.expectedDispatches.map(\.0))
        #expect(alerts.map(\.incident) == Self.expectedDispatches.map(\.1))
        #expect(alerts.filter { $0.severity == .alarm }.count == 7)
        #expect(alerts.filter { $0.severity == .warning }.count == 3)
        #expect(alerts.filter { $0.severity == .information }.count == 8)
        #expect(alerts.first { $0.incident == "FG-5" && $0.kind == .fall }?.wearerResumedWalking == true)
        #expect(alerts.first { $0.incident == "FG-2" && $0.kind == .fall }?.time == 3030)
        #expect(alerts.first { $0.kind == .helpRequested }?.time == 9002)
        #expect(alerts.first { $0.incident == "FG-6" }?.time == 30012)

        let events = result.effects.events
        #expect(events.count == 56)
        var counts: [IncidentEvent.Kind: Int] = [:]
        for event in events { counts[event.event, default: 0] += 1 }
        #expect(counts == Self.expectedEventCounts)
        #expect(events.map(\.time) == events.map(\.time).sorted(), "the log is in time order")
        #expect(events.filter { $0.alert != nil }.count == alerts.count, "every dispatch is in the log")
        #expect(Set(events.compactMap(\.incident).filter { !$0.contains("fault") }).count == 12)

        #expect(result.timerCalls == 18 && result.emptyTimerCalls == 0, "every deadline had something to do")
        let e = result.engine
        #expect(e.state == .monitoring && e.sensorFault == nil && e.nextDeadline == nil)
        #expect(e.sound == .silent && e.indicator == .monitoring && e.clock == 86_400)
        #expect(result.effects.sounds.last == .silent && result.effects.indicators.last == .monitoring)
    }

    /// A runtime that ticks every second, or one that never calls `advance` between inputs,
    /// must see exactly the same day: timers fire at their own times whenever they are noticed.
    @Test func howOftenTheRuntimeAdvancesDoesNotChangeTheDay() {
        let reference = Self.runDeadlineDriven().effects

        var ticking = AlertEngine()
        var ticked: [AlertEffect] = []
        var next = 0
        for second in 0...86_400 {
            let t = Double(second)
            while next < Self.script.count, Self.script[next].time <= t {
                ticked += ticking.handle(Self.script[next].input, at: Self.script[next].time)
                next += 1
            }
            ticked += ticking.advance(to: t)
        }
        #expect(ticked == reference)

        var lazy = AlertEngine()
        var lazyEffects: [AlertEffect] = []
        for step in Self.script { lazyEffects += lazy.handle(step.input, at: step.time) }
        lazyEffects += lazy.advance(to: 86_400)
        #expect(lazyEffects.alerts == reference.alerts && lazyEffects.events == reference.events)
        #expect(lazy == ticking, "same final engine")
    }
}
