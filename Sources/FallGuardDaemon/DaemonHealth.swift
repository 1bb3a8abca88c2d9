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
    let current: CurrentConfiguration, liveness: Liveness, notifiers: Notifiers
    let incidentLog: IncidentLog, recorder: FieldRecorder
    // …and whom it tells.
    let alarm: AlarmController, systemd: SystemdNotifier?, logger: Logger
    /// The problems of the last check.
    private let reported = Mutex<[String]>([])
    /// Whether the storage problem now going on was sent as a device-problem alert.
    private let storageAlerted = Mutex(false)

    init(current: CurrentConfiguration, liveness: Liveness, notifiers: Notifiers, incidentLog: IncidentLog,
         recorder: FieldRecorder, alarm: AlarmController, systemd: SystemdNotifier?, logger: Logger) {
        (self.current, self.liveness, self.notifiers, self.incidentLog) = (current, liveness, notifiers, incidentLog)
        (self.recorder, self.alarm, self.systemd, self.logger) = (recorder, alarm, systemd, logger)
    }

    /// What keeps alerts from going out or the record from being kept; empty when all is well.
    var problems: [String] {
        let stalled = liveness.stalled(nowNanoseconds: MonotonicClock.nanoseconds())
            .map { "\($0.part) has not gone round for \(Int($0.silentSeconds)) s (the watchdog is no longer fed)" }
        return [stateDirectoryProblem].compactMap { $0 } + notifiers.problems + [incidentLog.problem].compactMap { $0 }
            + recorder.problems + stalled
    }

    /// Why the state directory is not used, nil while it is (made again if it went missing).
    var stateDirectoryProblem: String? {
        StateFiles.prepare(current.now.stateDirectory).map { "state directory not used: \($0)" }
    }

    /// Why the daemon cannot store alerts (its state directory not used, the outbox not open),
    /// nil while it can.
    var storageProblem: String? { stateDirectoryProblem ?? notifiers.outbox.unavailable }

    /// Once a second (health service): the problems now, told where they must be.
    func check() {
        let now = problems
        let before = reported.withLock { old in defer { old = now }; return old }
        alarm.deliveryTrouble(!now.isEmpty)
        for p in now where !before.contains(p) { logger.critical("UNHEALTHY: \(p)") }
        for p in before where !now.contains(p) { logger.notice("resolved: \(p)") }
        if before.isEmpty != now.isEmpty { try? systemd?.status(now.first.map { "UNHEALTHY: \($0)" } ?? "monitoring") }
        alertStorageProblem()
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
