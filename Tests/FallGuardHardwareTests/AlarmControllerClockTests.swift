import FallGuardCore
import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

/// The controller's engine clock runs `hold` behind CLOCK_MONOTONIC so that a debounced press,
/// which arrives 30 ms after its edge, still counts when its edge came before the deadline.
@Suite struct AlarmControllerClockTests {
    static let fall = FallSuspected(detector: "test", impactTime: 0, decisionTime: 0, peak: 3, phases: [], features: [])

    func run(pressEdgeBeforeDeadlineMs: Int64) throws -> [AlertKind] {
        let sink = AlarmControllerTests.Collect()
        let settings = alarmSection(countdown: 5, finalPhase: 0)
        let alarm = try AlarmController(settings: settings, buzzer: nil, led: nil, button: nil, sink: sink, incidentLog: nil)
        alarm.start()
        defer { alarm.stop() }
        let detected = MonotonicClock.nanoseconds()
        alarm.fallSuspected(Self.fall)
        let deadline = detected + 5_000_000_000
        // The edge comes just before (or after) the deadline; the debouncer delivers it 30 ms later.
        let edge = deadline - pressEdgeBeforeDeadlineMs * 1_000_000
        MonotonicClock.sleep(until: edge + 30_000_000)
        alarm.button(.pressed(at: edge))
        MonotonicClock.sleep(until: edge + 130_000_000)
        alarm.button(.released(at: edge + 100_000_000, duration: 100_000_000, long: false))
        MonotonicClock.sleep(until: deadline + 400_000_000)
        return sink.kinds
    }

    @Test func aPressWhoseEdgeCameTenMillisecondsBeforeTheDeadlineAborts() throws {
        #expect(try run(pressEdgeBeforeDeadlineMs: 10) == [])
    }

    @Test func aPressWhoseEdgeCameAfterTheDeadlineIsTooLate() throws {
        // The alert went out; the late press is then the wearer's "I'm OK".
        #expect(try run(pressEdgeBeforeDeadlineMs: -20) == [.fall, .resolvedByWearer])
    }
}

/// The controller tells its sink about each countdown: armed when it begins, disarmed when
/// it is aborted, and the fall alert delivered at expiry.
@Suite struct AlarmControllerArmingTests {
    final class Recorder: AlertSink, @unchecked Sendable {
        let lock = NSLock()
        var calls: [String] = []
        var fallbacks: [Double] = []
        func deliver(_ alert: Alert) throws { lock.withLock { calls.append("deliver \(alert.kind.rawValue) \(alert.incident)") } }
        func arm(_ alert: Alert, fallback seconds: Double) throws {
            lock.withLock { calls.append("arm \(alert.kind.rawValue) \(alert.incident)"); fallbacks.append(seconds) }
        }
        func disarm(incident: String, reason: String) throws { lock.withLock { calls.append("disarm \(incident) \(reason)") } }
        var snapshot: [String] { lock.withLock { calls } }
    }

    @Test func aCountdownIsArmedWhenItBeginsAndDisarmedByAnAbort() throws {
        let sink = Recorder()
        let settings = alarmSection(countdown: 5, finalPhase: 0)
        let alarm = try AlarmController(settings: settings, buzzer: nil, led: nil, button: nil, sink: sink, incidentLog: nil)
        alarm.start()
        defer { alarm.stop() }
        alarm.fallSuspected(AlarmControllerClockTests.fall)
        for _ in 0..<300 where sink.snapshot.isEmpty { usleep(10_000) }
        #expect(sink.snapshot == ["arm fall FG-1"])
        // countdown 5 s + hold 0.13 s + long press 2 s + margin 5 s, less the time taken to arm.
        let fallback = try #require(sink.lock.withLock { sink.fallbacks.first })
        #expect(fallback > 12.0 && fallback <= 12.13)
        let t = MonotonicClock.nanoseconds()
        alarm.button(.pressed(at: t))
        alarm.button(.released(at: t + 80_000_000, duration: 80_000_000, long: false))
        for _ in 0..<300 where sink.snapshot.count < 2 { usleep(10_000) }
        let calls = sink.snapshot
        #expect(calls.count == 2 && calls[1].hasPrefix("disarm FG-1 false-alarm: aborted by the wearer"))
    }

    @Test func theFallAlertAtExpiryIsDeliveredAfterItWasArmed() throws {
        let sink = Recorder()
        let alarm = try AlarmController(settings: alarmSection(countdown: 5, finalPhase: 0), buzzer: nil, led: nil, button: nil,
                                        sink: sink, incidentLog: nil)
        alarm.start()
        defer { alarm.stop() }
        alarm.fallSuspected(AlarmControllerClockTests.fall)
        for _ in 0..<800 where sink.snapshot.count < 2 { usleep(10_000) }
        #expect(sink.snapshot == ["arm fall FG-1", "deliver fall FG-1"])
    }

    @Test func incidentNumbersContinueFromTheIncidentLog() throws {
        let dir = NSTemporaryDirectory() + "fg-num-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = try IncidentLog(stateDirectory: dir)
        try log.append(IncidentEvent(time: 1, incident: "FG-7", event: .fallSuspected, detail: ""))
        try log.append(IncidentEvent(time: 2, incident: "FG-fault-3", event: .sensorFault, detail: ""))
        try log.append(IncidentEvent(time: 3, incident: "OTHER-40", event: .fallSuspected, detail: ""))
        try log.append(json: #"{"event":"dispatch-failed","incident":"FG-12","alert":"fall","error":"disk full"}"#)
        #expect(log.numbering(prefix: "FG") == IncidentNumbering(incidents: 12, faults: 3))
        let sink = Recorder()
        let alarm = try AlarmController(settings: alarmSection(countdown: 30), buzzer: nil, led: nil, button: nil,
                                        sink: sink, incidentLog: log)
        alarm.start()
        defer { alarm.stop() }
        alarm.fallSuspected(AlarmControllerClockTests.fall)
        for _ in 0..<300 where sink.snapshot.isEmpty { usleep(10_000) }
        #expect(sink.snapshot == ["arm fall FG-13"])
    }
}
