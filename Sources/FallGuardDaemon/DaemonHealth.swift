import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware
import FallGuardSystemd
import Foundation
import Logging
import Synchronization

/// What keeps alerts from being stored or sent, or the record from being kept: the daemon's
/// problems, checked once a second by the health service. A change reaches the alarm as an
/// engine input (the LED shows the fault pattern while alerts may not reach anyone), the log
/// (each problem when it begins and ends), systemd's status line, and the helpers (a
/// storage problem is sent once per episode as a device-problem alert).
final class DaemonHealth: Sendable {
    // What it asks about…
    let current: CurrentConfiguration, liveness: Liveness, notifiers: any NotifierUpkeep
    let incidentLog: IncidentLog, recorder: FieldRecorder
    // …and whom it tells.
    let alarm: AlarmController, systemd: SystemdNotifier?, logger: Logger
    /// The problems of the last check, each with when the log last said it (monotonic s).
    private let reported = Mutex<[String: Double]>([:])
    /// How often the log says again a problem that goes on (journald keeps what a person may
    /// only read hours later, and a line from the boot scrolls away).
    static let reminderInterval = 3600.0
    /// Whether the storage problem now going on was sent as a device-problem alert.
    private let storageAlerted = Mutex(false)
    /// The last step of the wall clock the outbox followed: by how much, and when (ISO 8601).
    private let lastClockStep = Mutex<(seconds: Double, at: String)?>(nil)
    /// Why the state directory is not used (nil while it is), as ``maintain()`` last found it.
    private let stateDirectory: Mutex<String?>

    /// `stateDirectoryProblem`: what `StateFiles.prepare` said at start.
    init(current: CurrentConfiguration, liveness: Liveness, notifiers: any NotifierUpkeep, incidentLog: IncidentLog,
         recorder: FieldRecorder, alarm: AlarmController, systemd: SystemdNotifier?, logger: Logger,
         stateDirectoryProblem: String?) {
        (self.current, self.liveness, self.notifiers, self.incidentLog) = (current, liveness, notifiers, incidentLog)
        (self.recorder, self.alarm, self.systemd, self.logger) = (recorder, alarm, systemd, logger)
        stateDirectory = Mutex(stateDirectoryProblem)
    }

    /// What keeps alerts from going out or the record from being kept; empty when all is well.
    /// Reads only (the status service and the page read it too): ``maintain()`` does the work.
    var problems: [String] {
        let stalled = liveness.stalled(nowNanoseconds: MonotonicClock.nanoseconds())
            .map { "\($0.part) has not gone round for \(Int($0.silentSeconds)) s (the watchdog is no longer fed)" }
        return [stateDirectoryProblem].compactMap { $0 } + notifiers.problems + [incidentLog.problem].compactMap { $0 }
            + recorder.problems + stalled
    }

    /// Why the state directory is not used, nil while it is.
    var stateDirectoryProblem: String? { stateDirectory.withLock { $0 }.map { "state directory not used: \($0)" } }

    /// Once a second, before the problems are read: the state directory made again if it went
    /// missing (or found usable again), the outbox file tried again while it cannot be opened.
    func maintain() {
        let why = StateFiles.prepare(current.now.stateDirectory)
        stateDirectory.withLock { $0 = why }
        notifiers.maintainStorage()
    }

    /// Why the daemon cannot store alerts (its state directory not used, the outbox not open),
    /// nil while it can.
    var storageProblem: String? { stateDirectoryProblem ?? notifiers.outbox.unavailable }

    /// Once a second (health service): the problems now, told where they must be.
    func check() {
        maintain()
        let now = problems
        let said = reported.withLock { last in
            let said = Self.toSay(now, last: last, at: MonotonicClock.seconds(), every: Self.reminderInterval)
            last = said.last
            return said
        }
        alarm.deliveryTrouble(!now.isEmpty)
        for p in said.begun { logger.critical("UNHEALTHY: \(p)") }
        for p in said.goingOn { logger.critical("still UNHEALTHY: \(p)") }
        for p in said.resolved { logger.notice("resolved: \(p)") }
        if said.changedHealth { try? systemd?.status(now.first.map { "UNHEALTHY: \($0)" } ?? "monitoring") }
        alertStorageProblem()
        followWallClock()
    }

    /// A step of the wall clock (wall minus monotonic moved by more than a second): the outbox
    /// moves its schedule with it (an outbox not open yet follows it once it opens).
    private func followWallClock() {
        guard notifiers.outbox.unavailable == nil else { return }
        do {
            if let step = try notifiers.outbox.followWallClock() {
                lastClockStep.withLock { $0 = (step.step, isoTimestamp()) }
                logger.warning("the wall clock was stepped by \(String(format: "%+.1f", step.step)) s (synchronised: \(SystemClock.synchronized().map { "\($0)" } ?? "unknown")): countdowns run on the monotonic clock, \(step.rescheduled) scheduled deliveries keep their waits, the heartbeat follows the time of day")
            }
        } catch {
            logger.error("the wall clock was stepped, and the outbox could not follow it yet: \(error)")
        }
    }

    /// Whether the wall clock is synchronised, and its last step, for the status.
    var clock: DaemonStatus.Clock {
        let step = lastClockStep.withLock { $0 }
        return DaemonStatus.Clock(synchronized: SystemClock.synchronized(), lastStepSeconds: step?.seconds, lastStepAt: step?.at)
    }

    /// What the log says of the problems `now`, given when each of the `last` ones was said:
    /// the new ones, those going on for `every` seconds since they were last said, and those
    /// resolved; `last` becomes the problems now with when each was said.
    static func toSay(_ now: [String], last: [String: Double], at time: Double, every: Double)
        -> (begun: [String], goingOn: [String], resolved: [String], changedHealth: Bool, last: [String: Double]) {
        var next: [String: Double] = [:]
        var begun: [String] = [], goingOn: [String] = []
        for p in now {
            if let said = last[p] {
                if time - said >= every { goingOn.append(p); next[p] = time } else { next[p] = said }
            } else {
                begun.append(p)
                next[p] = time
            }
        }
        let resolved = last.keys.filter { !now.contains($0) }.sorted()
        return (begun, goingOn, resolved, last.isEmpty != now.isEmpty, next)
    }

    /// Once per episode: a storage problem goes to the helpers as a device-problem alert
    /// (through the hand-off: sent directly while the outbox cannot take it).
    private func alertStorageProblem() {
        let problem = storageProblem
        let send = storageAlerted.withLock { sent -> Bool in
            defer { sent = problem != nil }
            return problem != nil && !sent
        }
        guard send, let problem else { return }
        let c = current.now
        let alert = Alert(kind: .deviceProblem, incident: "\(c.alarm.incidentPrefix)-storage-\(Int(Date().timeIntervalSince1970))",
                          time: MonotonicClock.seconds(),
                          sensorFault: SensorFault(.storage, device: "state directory \(c.stateDirectory)", detail: problem))
        logger.critical("\(alert.incident): the state directory cannot store alerts; the helpers are told (device-problem alert)")
        do { try notifiers.sink.deliver(alert) } catch {
            logger.critical("\(alert.incident): the device-problem alert could not be handed over: \(error)")
        }
    }
}
