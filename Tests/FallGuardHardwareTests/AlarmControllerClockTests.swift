import FallGuardCore
import FallGuardHardware
import Foundation
import Testing

/// The controller's engine clock runs `hold` behind CLOCK_MONOTONIC so that a debounced press,
/// which arrives 30 ms after its edge, still counts when its edge came before the deadline.
@Suite struct AlarmControllerClockTests {
    final class Sink: AlertSink, @unchecked Sendable {
        let lock = NSLock()
        var alerts: [Alert] = []
        func deliver(_ alert: Alert) throws { lock.withLock { alerts.append(alert) } }
        var kinds: [AlertKind] { lock.withLock { alerts.map(\.kind) } }
    }

    static let fall = FallSuspected(detector: "test", impactTime: 0, decisionTime: 0, peak: 3, phases: [], features: [])

    func run(pressEdgeBeforeDeadlineMs: Int64) throws -> [AlertKind] {
        let sink = Sink()
        let settings = AlarmSection(countdown: 5, finalPhase: 0)
        let alarm = try AlarmController(settings: settings, buzzer: nil, led: nil, button: nil, sink: sink, incidentLog: nil)
        alarm.start()
        defer { alarm.stop() }
        let detected = monotonicNanoseconds()
        alarm.fallSuspected(Self.fall)
        let deadline = detected + 5_000_000_000
        // The edge comes just before (or after) the deadline; the debouncer delivers it 30 ms later.
        let edge = deadline - pressEdgeBeforeDeadlineMs * 1_000_000
        sleepUntil(nanoseconds: edge + 30_000_000)
        alarm.button(.pressed(at: edge))
        sleepUntil(nanoseconds: edge + 130_000_000)
        alarm.button(.released(at: edge + 100_000_000, duration: 100_000_000, long: false))
        sleepUntil(nanoseconds: deadline + 400_000_000)
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
