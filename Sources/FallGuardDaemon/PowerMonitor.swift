import FallGuardConfig
import FallGuardCore
import FallGuardHardware
import FallGuardNotify
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The battery and the mains (`power:`): reads the `power_supply` class every
/// `poll-interval` seconds, lets ``PowerWatch`` decide, and tells each event once: a
/// device-problem alert through the sink (through the outbox, or directly while it cannot take
/// it), the log, the status, MQTT and the gauges. With no battery and no external supply,
/// nothing is claimed (``status`` is nil).
final class PowerMonitor: Sendable {
    let source: PowerSupplyClass
    let interval: Double
    let notifiers: Notifiers, incidentPrefix: String, logger: Logger
    private let state: Mutex<(watch: PowerWatch, onBatteryIncident: String?, onBatterySince: Date?)>

    init(_ section: PowerSection, notifiers: Notifiers, incidentPrefix: String, logger: Logger) {
        source = PowerSupplyClass(root: section.root)
        interval = section.pollInterval
        state = Mutex((PowerWatch(thresholds: section.thresholds), nil, nil))
        (self.notifiers, self.incidentPrefix, self.logger) = (notifiers, incidentPrefix, logger)
    }

    /// What the status shows; nil before the first read and while there is nothing to show.
    var status: DaemonStatus.Power? {
        let (watch, _, since) = state.withLock { $0 }
        guard let reading = watch.last, !reading.isEmpty else { return nil }
        return DaemonStatus.Power(
            batteries: reading.batteries.map { .init(name: $0.name, capacity: $0.capacity, status: $0.status) },
            mainsOnline: reading.mainsOnline, onBatterySince: since.map { isoTimestamp($0) },
            batteryLow: watch.lowTold, shuttingDown: watch.criticalTold)
    }

    /// One read (power service): the events it gives are told.
    func check() {
        let reading = source.read()
        let now = MonotonicClock.seconds()
        let (events, changed) = state.withLock { s -> ([PowerEvent], Bool) in
            let changed = s.watch.last != reading
            return (s.watch.observe(reading, at: now), changed)
        }
        if changed, !reading.isEmpty { notifiers.powerChanged(reading) }
        for event in events { tell(event, reading: reading) }
    }

    private func tell(_ event: PowerEvent, reading: PowerReading) {
        let stamp = Int(Date().timeIntervalSince1970)
        let alert: Alert
        switch event {
        case let .batteryLow(battery, capacity):
            alert = Alert(kind: .deviceProblem, incident: "\(incidentPrefix)-power-\(stamp)", time: MonotonicClock.seconds(),
                          sensorFault: SensorFault(.batteryLow, device: "battery \(battery)", detail: "\(capacity) %"))
        case let .shuttingDown(battery, capacity):
            alert = Alert(kind: .deviceProblem, incident: "\(incidentPrefix)-power-\(stamp)", time: MonotonicClock.seconds(),
                          sensorFault: SensorFault(.shuttingDown, device: "battery \(battery)", detail: "\(capacity) %"))
        case let .onBattery(since, battery):
            let incident = "\(incidentPrefix)-power-\(stamp)"
            let gone = Date(timeIntervalSinceNow: since - MonotonicClock.seconds())
            state.withLock { ($0.onBatteryIncident, $0.onBatterySince) = (incident, gone) }
            alert = Alert(kind: .deviceProblem, incident: incident, time: MonotonicClock.seconds(),
                          sensorFault: SensorFault(.onBattery, device: "mains",
                                                   detail: battery.map { "battery \($0.name) \($0.capacity.map { "\($0) %" } ?? "")" } ?? ""))
        case let .mainsBack(after):
            let incident = state.withLock { s in defer { (s.onBatteryIncident, s.onBatterySince) = (nil, nil) }; return s.onBatteryIncident }
            alert = Alert(kind: .deviceRecovered, incident: incident ?? "\(incidentPrefix)-power-\(stamp)", time: MonotonicClock.seconds(),
                          sensorFault: SensorFault(.onBattery, device: "mains", detail: "back after \(Int(after)) s"))
        }
        let fault = alert.sensorFault!
        logger.warning("\(alert.incident): power: \(fault.problem.rawValue): \(fault); the helpers are told (\(alert.kind.rawValue) alert)")
        do { try notifiers.sink.deliver(alert) } catch {
            logger.critical("\(alert.incident): the \(fault.problem.rawValue) alert could not be handed over: \(error)")
        }
    }
}

/// Reads the power supplies every `poll-interval` seconds (a few short sysfs files: about
/// 0.0002 % of a core at 10 s, `bench/power-poll.sh`), only while `power.enabled`.
struct PowerService: Service {
    let monitor: PowerMonitor

    func run() async throws {
        // The sleep is cut short by a stop: a 10 s poll must not hold up the daemon's shutdown.
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                monitor.check()
                do { try await Task.sleep(for: .seconds(monitor.interval)) } catch { return }
            }
        }
    }
}
