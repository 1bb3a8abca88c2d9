import FallGuardConfig
import FallGuardHardware
import Foundation
import FallGuardSystemd
import Logging

/// The moment the daemon monitors: the start-up line, `READY=1` to systemd, `ready_ms` in the
/// status file, and the caller's `onReady`.
struct Readiness: Sendable {
    let current: CurrentConfiguration, start: ProgramStart
    /// Whether the sensor is a recording.
    let replaying: Bool
    /// The channels, as the start-up line names them, and how many there are (0: nobody will be told).
    let channels: @Sendable () -> (summary: String, configured: Int)
    let publisher: StatusPublisher
    let systemd: SystemdNotifier?, onReady: @Sendable () -> Void, logger: Logger

    func announce() {
        let c = current.now
        let channels = self.channels()
        // From exec, unless this process ran something heavy before the command (`swift run`
        // builds, then execs the program in the same process): then from the command's start.
        let ready: (ms: Int, since: String)
        if start.usage.cpuSeconds < 0.5, let sinceExec = ProcessUsage.secondsSinceStart() {
            ready = (Int(sinceExec * 1000), "exec")
        } else {
            ready = (Int(start.seconds * 1000), "the command started (this process ran \(String(format: "%.1f", start.usage.cpuSeconds)) s of CPU before it)")
        }
        publisher.readyMilliseconds.withLock { $0 = ready.ms }
        logger.notice("monitoring: \(replaying ? "replay" : "sensor") → \(c.detector.name) → alarm (\(c.gpio.enabled ? "GPIO" : "console")) → \(channels.summary); configuration \(c.label); state \(c.stateDirectory); ready \(ready.ms) ms after \(ready.since)")
        if let why = RealTimePriority.refusal {
            logger.warning("the alarm's threads run without real-time priority (SCHED_FIFO 10: \(why)); buzzer timing may suffer on a loaded machine. Under systemd: LimitRTPRIO=10, RestrictRealtime=no, sched_setscheduler allowed (deploy/fallguard.service)")
        }
        if channels.configured == 0 {
            logger.critical("monitoring locally only: \(NotifySections.nobodyWillBeToldMessage); alerts go to this log. Configure one in \(c.label) (its comments show how), then: fallguard check-config && systemctl restart fallguard && fallguard test-alert")
        }
        try? systemd?.ready(status: channels.configured == 0 ? "monitoring locally: NOBODY WILL BE TOLD (no channel)" : "monitoring")
        onReady()
    }
}
