import Atomics
import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware
import FallGuardWeb
import Foundation
import Logging
import Synchronization

/// What the sensor thread counts for the gauges between two status passes.
final class SensorCounters: Sendable {
    let detections = ManagedAtomic<Int>(0)
    let faultsRaised = ManagedAtomic<Int>(0)
}

/// `<state>/status.json`, the gauges and the status the page's stream sends: one
/// ``DaemonStatus`` made once a second by the status service from snapshots of the alarm,
/// the sensor loop, the notifiers and the recorder.
final class StatusPublisher: Sendable {
    // Whose snapshots it takes.
    let current: CurrentConfiguration, alarm: AlarmController, loop: SensorLoop
    let notifiers: any NotifierSnapshots, recorder: FieldRecorder, health: DaemonHealth
    let live: LiveSignal, counters: SensorCounters, logger: Logger
    /// The libgpiod the alarm's lines go through, as the status names it.
    let gpio: String?
    let metrics: DaemonMetrics
    /// The battery and the mains; nil with `power.enabled: false`.
    let power: PowerMonitor?
    let started = Date()
    /// Milliseconds from exec to monitoring (set once, by the readiness announcement).
    let readyMilliseconds = Mutex<Int?>(nil)
    /// The status as open pages get it, made while one is open.
    private let pageStatus = Mutex<(version: Int, json: String)?>(nil)
    /// What the page last got, without the fields that change every second.
    private let pageStatusShown = Mutex<DaemonStatus?>(nil)
    private let writeFailure = Mutex<String?>(nil)

    init(current: CurrentConfiguration, alarm: AlarmController, loop: SensorLoop, notifiers: any NotifierSnapshots, recorder: FieldRecorder,
         live: LiveSignal, health: DaemonHealth, counters: SensorCounters, metrics: DaemonMetrics, power: PowerMonitor?,
         gpio: String?, logger: Logger) {
        (self.metrics, self.power) = (metrics, power)
        (self.current, self.alarm, self.loop, self.notifiers, self.recorder) = (current, alarm, loop, notifiers, recorder)
        (self.live, self.health, self.counters, self.gpio, self.logger) = (live, health, counters, gpio, logger)
    }

    /// The status the page's stream last made, with its version.
    var cachedPageStatus: (version: Int, json: String)? { pageStatus.withLock { $0 } }

    /// The status as `status.json` has it, now.
    func currentStatus() -> DaemonStatus {
        currentStatus(engine: alarm.snapshot, sensor: loop.sensor, samples: loop.rawSamples.load(ordering: .relaxed),
                      problems: health.problems)
    }

    /// The status from snapshots already taken (the gauges describe the same moment).
    private func currentStatus(engine: AlertEngine, sensor: SensorLoop.SensorState, samples: Int, problems: [String]) -> DaemonStatus {
        var remaining: Double?
        let now = MonotonicClock.seconds()
        if case let .countdown(c) = engine.state { remaining = c.remaining(at: now) }
        return DaemonStatus(
            pid: getpid(), version: fallguardVersion, started: isoTimestamp(started), updated: isoTimestamp(),
            readyMs: readyMilliseconds.withLock { $0 },
            state: engine.status.rawValue, incident: engine.state.incident, countdownRemaining: remaining,
            sensor: sensor.info.map {
                .init(device: "\($0.id) (\($0.name))", uri: $0.uri, mode: $0.mode.rawValue, rate: $0.samplingFrequency ?? 0,
                      problems: sensor.problems.map(\.rawValue), samples: samples, overruns: sensor.overruns,
                      gyroscope: $0.gyroscope != nil, axes: $0.axes)
            },
            lastIncident: notifiers.lastIncident, outbox: notifiers.outboxStatus(), configuration: current.now.label,
            problems: problems, gpio: gpio, recording: recorder.status,
            notWorn: engine.notWorn.map {
                .init(since: isoTimestamp(Date(timeIntervalSinceNow: $0.since - now)), incident: $0.incident, reported: $0.reported)
            }, clock: health.clock, power: power?.status, modem: notifiers.modemStatus)
    }

    /// The status as the page reads it: `status.json`'s fields, the detector's thresholds on
    /// |a| for the live plot, and the last heartbeat message.
    func pageStatusJSON(_ status: DaemonStatus) -> String {
        let thresholds = ((try? current.now.detector.configuration()).map(SignalPlot.thresholds(of:)) ?? [])
            .map { PageStatus.Threshold(name: $0.name, g: $0.g) }
        let heartbeat = notifiers.lastHeartbeat.map {
            "\(isoTimestamp(Date(timeIntervalSince1970: $0.createdAt)).prefix(19).replacingOccurrences(of: "T", with: " ")), \($0.state.rawValue)"
        }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = (try? encoder.encode(PageStatus(status: status, thresholds: thresholds, heartbeat: heartbeat))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes `<state>/status.json` and refreshes the gauges (status service only).
    func publish(samplesCounted: inout Int) {
        let configuration = current.now
        let engine = alarm.snapshot
        let sensor = loop.sensor
        let total = loop.rawSamples.load(ordering: .relaxed)
        let file = currentStatus(engine: engine, sensor: sensor, samples: total, problems: health.problems)
        if live.viewers > 0 {   // a new status for open pages only when something they show changed
            var shown = file
            (shown.updated, shown.recording) = ("", nil)
            shown.sensor?.samples = 0
            let changed = pageStatusShown.withLock { last in defer { last = shown }; return last != shown }
            if changed {
                let json = pageStatusJSON(file)
                pageStatus.withLock { p in p = ((p?.version ?? 0) + 1, json) }
            }
        }
        if StateFiles.distrust(of: configuration.stateDirectory) == nil {   // else a problem says why
            do {
                try file.write(to: configuration.stateDirectory)
                writeFailure.withLock { $0 = nil }
            } catch {
                let why = "\(error)"
                let changed = writeFailure.withLock { last in defer { last = why }; return last != why }
                if changed { logger.error("status: cannot write \(why) (said once while it lasts)") }
            }
        }
        record(file, engine: engine, sensor: sensor, samples: total, samplesCounted: &samplesCounted)
    }

    private func record(_ file: DaemonStatus, engine: AlertEngine, sensor: SensorLoop.SensorState, samples total: Int,
                        samplesCounted: inout Int) {
        metrics.samples.increment(by: Int64(total - samplesCounted))
        samplesCounted = total
        metrics.overruns.record(sensor.overruns)
        metrics.rate.record(sensor.info?.samplingFrequency ?? 0)
        metrics.sensorHealthy.record(sensor.info != nil && sensor.problems.isEmpty ? 1 : 0)
        metrics.sensorFaults.increment(by: Int64(counters.faultsRaised.exchange(0, ordering: .relaxed)))
        metrics.fallsSuspected.increment(by: Int64(counters.detections.exchange(0, ordering: .relaxed)))
        metrics.state.record(engine.status.gaugeValue)
        let active: AlertState.Active? = if case let .alertActive(a) = engine.state { a } else { nil }
        metrics.alertDelivered.record(active?.delivered == true ? 1 : 0)
        metrics.alertReached.record(active?.reachedBy != nil ? 1 : 0)
        if let o = file.outbox {
            metrics.outboxPending.record(o.pending)
            metrics.outboxSent.record(o.sent)
            metrics.outboxFailed.record(o.failed)
            metrics.outboxOldestPendingAge.record(o.oldestPendingAge ?? 0)
            metrics.outboxQuarantined.record(o.quarantined ?? 0)
        }
        metrics.healthy.record(file.problems?.isEmpty == false ? 0 : 1)
        metrics.channelsConfigured.record(notifiers.channelsConfigured)
        metrics.outboxHeldInMemory.record(notifiers.heldInMemory)
        if let p = file.power {   // no power supply: no gauge claims one
            metrics.record(batteryCapacity: p.batteries.compactMap(\.capacity).min(), mainsOnline: p.mainsOnline)
        }
        if let m = file.modem { metrics.record(modemSignal: m.signalPercent, registered: m.problem == nil) }
        let usage = ProcessUsage.current()
        metrics.cpuSeconds.record(usage.cpuSeconds)
        metrics.residentBytes.record(usage.maxResidentKiB * 1024)
    }
}
