import Atomics
import FallGuardCore
import FallGuardHardware
import FallGuardSystemd
import Foundation
import Logging

/// The daemon's consumer thread: drains the sensor's ring through the pipeline (health,
/// resampler, detector), hands detections and sensor faults to the alarm, and pings the systemd
/// watchdog on every pass, so a stalled loop gets the service restarted.
final class SampleLoop: @unchecked Sendable {
    // @unchecked: `pipeline` and `device` belong to the loop thread; `pendingDetector` is
    // guarded by `lock`; counters are atomics read by the status and metrics.
    private let source: any SampleSource
    private var pipeline: SensorPipeline
    private let alarm: AlarmController
    private let watchdog: WatchdogPinger?
    private let logger: Logger
    private let stop = ManagedAtomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var pendingDetector: (detector: any FallDetector, label: String)?
    private var info: AccelerometerInfo?
    private var problems: Set<SensorProblem> = []

    let rawSamples = ManagedAtomic<Int>(0)
    let detections = ManagedAtomic<Int>(0)
    let faultsRaised = ManagedAtomic<Int>(0)

    init(source: any SampleSource, detector: any FallDetector, alarm: AlarmController,
         watchdog: WatchdogPinger?, logger: Logger) {
        self.source = source
        pipeline = SensorPipeline(source: source, detector: detector)
        self.alarm = alarm
        self.watchdog = watchdog
        self.logger = logger
    }

    func start() {
        source.start()
        let t = Thread { [self] in run() }
        t.name = "fallguard-samples"
        t.start()
    }

    func stopAndWait() {
        stop.store(true, ordering: .releasing)
        done.wait()
        source.stopAndWait()
    }

    /// Used from the next pass on (SIGHUP).
    func replaceDetector(_ detector: any FallDetector, label: String) {
        lock.withLock { pendingDetector = (detector, label) }
    }

    /// The device and its active problems, for the status.
    var sensor: (info: AccelerometerInfo?, problems: [SensorProblem], overruns: Int) {
        lock.withLock { (info, problems.map(\.self).sorted { $0.rawValue < $1.rawValue }, source.samples.overruns) }
    }

    private func run() {
        defer { done.signal() }
        if let why = source.cpu.pinCurrentThread() { logger.warning("sensor.cpu: not pinned: \(why)") }
        var device = "sensor"
        while !stop.load(ordering: .acquiring) {
            if let d = lock.withLock({ () -> (detector: any FallDetector, label: String)? in
                defer { pendingDetector = nil }
                return pendingDetector
            }) {
                pipeline.replaceDetector(d.detector)
                logger.notice("detector now \(d.label)")
            }
            let before = pipeline.rawSamples
            pipeline.poll(now: Double(monotonicNanoseconds()) * 1e-9) { output in
                switch output {
                case let .opened(info):
                    device = "\(info.id) (\(info.name))"
                    lock.withLock { self.info = info }
                    logger.notice("sensor \(device) at \(info.uri): \(info.mode.rawValue), \(info.samplingFrequency ?? 0) Hz")
                case let .health(change):
                    lock.withLock {
                        if change.isFault { problems.insert(change.problem) } else { problems.remove(change.problem) }
                    }
                    if change.isFault {
                        faultsRaised.wrappingIncrement(ordering: .relaxed)
                        logger.error("sensor \(device): \(change.problem.rawValue): \(change.detail)")
                    } else {
                        logger.notice("sensor \(device): \(change.problem.rawValue) ended: \(change.detail)")
                    }
                    alarm.sensorHealth(change, device: device)
                case let .detection(fall):
                    detections.wrappingIncrement(ordering: .relaxed)
                    alarm.fallSuspected(fall)
                    logger.warning("fall suspected: \(fall.reason)")
                }
            }
            rawSamples.wrappingIncrement(by: pipeline.rawSamples - before, ordering: .relaxed)
            do { _ = try watchdog?.tick(nowNanoseconds: monotonicNanoseconds()) } catch {
                logger.warning("systemd watchdog: \(error)")
            }
            source.waitForData(timeout: 0.25)   // the stall check (1 s) runs at least 4 times a second
        }
    }
}
