import FallGuardCore
import FallGuardHardware
import Synchronization

/// What the wearer is doing, from the same 40 Hz samples the fall detector sees (sensor
/// thread): walking (``WalkingDetector``: steps) and whether the device is worn at all
/// (``NotWornDetector``: only the sensor's own noise for minutes). Each change goes to the
/// alarm as an engine input: walking during a countdown is noted in the alert, or cancels
/// the countdown with `alarm.auto-cancel-when-walking`; not worn is shown in the status, on
/// the page and on MQTT, and told to the helpers after `alarm.not-worn-alert`.
final class WearWatch: Sendable {
    private let alarm: AlarmController
    private let state: Mutex<(walking: WalkingDetector, notWorn: NotWornDetector)>

    /// The time not-worn takes to be said: `notWornAlert` when it is shorter than the
    /// detector's default (15 min), never under a minute.
    static func settings(notWornAlert: Double?) -> NotWornDetector.Settings {
        let standard = NotWornDetector.Settings()
        var s = standard
        s.after = max(60, min(standard.after, notWornAlert ?? standard.after))
        return s
    }

    init(alarm: AlarmController, notWornAlert: Double?) {
        self.alarm = alarm
        state = Mutex((WalkingDetector(), NotWornDetector(settings: Self.settings(notWornAlert: notWornAlert))))
    }

    /// One 40 Hz sample (sensor thread only; the lock is never contended).
    func process(_ sample: AccelerationSample) {
        let (walkingChanged, walking, wornChanged, notWorn, after) = state.withLock { s in
            let (wasWalking, wasNotWorn) = (s.walking.isWalking, s.notWorn.isNotWorn)
            let walking = s.walking.process(sample)
            let notWorn = s.notWorn.process(sample)
            return (walking != wasWalking, walking, notWorn != wasNotWorn, notWorn, s.notWorn.settings.after)
        }
        if walkingChanged { alarm.wearerActivity(walking: walking) }
        if wornChanged {
            if notWorn { alarm.notWorn(since: MonotonicClock.seconds() - after) } else { alarm.wornAgain() }
        }
    }
}
