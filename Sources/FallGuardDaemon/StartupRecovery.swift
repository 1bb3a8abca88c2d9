import FallGuardCore
import FallGuardHardware
import FallGuardNotify
import Foundation
import Logging

/// What a process that ended badly left behind, taken over at start, and what a shutdown
/// must not leave behind: a fall alert nobody aborted goes out.
struct StartupRecovery: Sendable {
    let alarm: AlarmController
    /// Where the last run's alarms are looked up, and where an alert goes.
    let outbox: Outbox, sink: any AlertSink
    let incidentLog: IncidentLog
    let logger: Logger

    /// At start: the fall a crash lost between the incident log and the outbox goes out (see
    /// ``InterruptedIncident``); then the alarm a previous process left out (that fall, else the
    /// newest unacknowledged one in the outbox younger than `alertTimeout`) becomes the
    /// alarm's active alert: it sounds, and an acknowledgement or the wearer's press ends it
    /// and its escalation.
    func takeOver(alertTimeout: Double) {
        let lost = dispatchLostFall()
        let since = Date().timeIntervalSince1970 - alertTimeout
        guard let open = lost ?? (try? outbox.openAlarm(since: since)) ?? nil else { return }
        logger.critical("\(open.incident): the \(open.kind.rawValue) alert of a previous run is still out; the alarm takes it over")
        alarm.resume(open)
    }

    private func dispatchLostFall() -> Alert? {
        guard let lost = InterruptedIncident.find(inLog: incidentLog.lines(), now: Date().timeIntervalSince1970),
              (try? outbox.knows(incident: lost.incident)) != true else { return nil }
        logger.critical("\(lost.incident): the last process ended during the countdown before its alert was stored; the fall alert goes out now")
        let time = MonotonicClock.seconds()
        let alert = Alert(kind: .fall, incident: lost.incident, time: time, fall: lost.fall)
        try? sink.deliver(alert)
        try? incidentLog.append(IncidentEvent(time: time, incident: lost.incident, event: .countdownExpired,
                                              detail: "sent at start: the last process ended during the countdown", alert: .fall,
                                              fall: lost.fall))
        return alert
    }

    /// At shutdown: a countdown cut short was not aborted by anyone: the wearer may be on the
    /// floor, and nothing would tell anyone after the restart. The fall alert goes out now
    /// (into the durable outbox, delivered by the next start if not by this one).
    func dispatchInterruptedCountdown() {
        guard case let .countdown(c) = alarm.snapshot.state else { return }
        logger.critical("\(c.incident): shutting down during the countdown; the fall alert goes out now")
        let alert = c.fallAlert(at: MonotonicClock.seconds())
        do { try sink.deliver(alert) } catch {
            logger.critical("\(c.incident): the fall alert could NOT be handed to the notifiers: \(error)")
        }
    }
}
