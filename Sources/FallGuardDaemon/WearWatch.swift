import FallGuardCore
import FallGuardHardware
import Synchronization

/// What the wearer is doing, from the same 40 Hz samples the fall detector sees (sensor
/// thread): walking (``WalkingDetector``: steps) and whether the device is worn at all
/// (``NotWornDetector``: only the sensor's own noise for minutes). Each change goes to the
/// alarm as an engine input: walking during a countdown is noted in the alert, or cancels
/// the countdown with `alarm.auto-cancel-when-walking`; after a detection, the wearer up again
/// within the countdown (``RecoveryWatch``) ends it as a recovered fall; not worn is shown in the status, on
/// the page and on MQTT, and told to the helpers after `alarm.not-worn-alert`.
public final class WearWatch: Sendable {
    private let alarm: AlarmController
    /// How long after a detection the wearer is watched for getting up: the countdown.
    private let countdown: Double
    private let state: Mutex<(walking: WalkingDetector, notWorn: NotWornDetector, recovery: RecoveryWatch?, until: Double)>

    /// The time not-worn takes to be said: `notWornAlert` when it is shorter than the
    /// detector's default (15 min), never under a minute.
    static func settings(notWornAlert: Double?) -> NotWornDetector.Settings {
        let standard = NotWornDetector.Settings()
        var s = standard
        s.after = max(60, min(standard.after, notWornAlert ?? standard.after))
        return s
    }

    public init(alarm: AlarmController, notWornAlert: Double?) {
        self.alarm = alarm
        state = Mutex((WalkingDetector(), NotWornDetector(settings: Self.settings(notWornAlert: notWornAlert)), nil, 0))
        countdown = alarm.alertConfiguration.countdown
    }

    /// A detection (sensor thread): from the next sample on, the wearer is watched for getting
    /// up again (``RecoveryWatch``) until the countdown is over; a later detection starts afresh.
    public func fallDetected(_ fall: FallSuspected) {
        let watch = RecoveryWatch(after: fall)
        state.withLock { s in (s.recovery, s.until) = (watch, fall.decisionTime + countdown) }
    }

    /// One 40 Hz sample (sensor thread only; the lock is never contended).
    public func process(_ sample: AccelerationSample) {
        let (walkingChanged, walking, wornChanged, notWorn, after, upAfter) = state.withLock { s in
            let (wasWalking, wasNotWorn) = (s.walking.isWalking, s.notWorn.isNotWorn)
            let walking = s.walking.process(sample)
            let notWorn = s.notWorn.process(sample)
            var upAfter: Double?
            if var recovery = s.recovery {
                if sample.time > s.until {
                    s.recovery = nil
                } else if recovery.process(sample) {
                    upAfter = recovery.upAfter
                    s.recovery = nil
                } else {
                    s.recovery = recovery
                }
            }
            return (walking != wasWalking, walking, notWorn != wasNotWorn, notWorn, s.notWorn.settings.after, upAfter)
        }
        if let upAfter { alarm.wearerUp(after: upAfter) }
        if walkingChanged { alarm.wearerActivity(walking: walking) }
        if wornChanged {
            if notWorn { alarm.notWorn(since: MonotonicClock.seconds() - after) } else { alarm.wornAgain() }
        }
    }
}
