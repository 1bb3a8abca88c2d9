import Atomics
import Dispatch
import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware
import Foundation
import Logging
import Synchronization

/// The consumer side of the sensor, shared by `run`, `alarm` and `watch`: drains the sample
/// source through a ``SensorPipeline`` (health, resampler, detector) on one thread and hands
/// every output to the caller. The daemon runs it on a thread of its own (``start(_:)``); the
/// bring-up commands run it on theirs (``run(while:prepare:afterPass:_:)``).
public final class SensorLoop: Sendable {
    public let source: any SampleSource
    /// The detector to start with, then one swapped in by ``replaceDetector(_:)``.
    private let pendingDetector: Mutex<(any FallDetector)?>
    private let device: Mutex<SensorState>
    private let stopping = ManagedAtomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Raw samples consumed since start (read by the status and metrics).
    public let rawSamples = ManagedAtomic<Int>(0)

    /// The device and its active problems, as the status shows them.
    public struct SensorState: Sendable, Equatable {
        public var info: AccelerometerInfo?
        public var problems: [SensorProblem] = []
        public var overruns = 0
    }

    public init(source: any SampleSource, detector: any FallDetector) {
        self.source = source
        pendingDetector = Mutex(detector)
        device = Mutex(SensorState())
    }

    /// Used from the next pass on (SIGHUP); the new detector starts with an empty history.
    public func replaceDetector(_ detector: any FallDetector) {
        pendingDetector.withLock { $0 = detector }
    }

    /// The detector handed over since the last pass, taken.
    private func takePendingDetector() -> (any FallDetector)? {
        pendingDetector.withLock { p in defer { p = nil }; return p }
    }

    /// The device, its active problems and the ring's overruns.
    public var sensor: SensorState {
        var s = device.withLock { $0 }
        s.overruns = source.samples.overruns
        return s
    }

    /// Starts the source and runs the loop on a thread of its own until ``stopAndWait()``.
    /// The thread runs on the source's CPU (`sensor.cpu`). For IIO it is also the thread that
    /// captures (``SampleSource/waitForData(timeout:)``); a replay pushes from its own thread.
    /// `onSample` sees every 40 Hz sample the detector sees (the field-test recorder's tap).
    public func start(logger: Logger, afterPass: @escaping @Sendable () -> Void = {},
                      onSample: (@Sendable (AccelerationSample) -> Void)? = nil,
                      _ handle: @escaping @Sendable (SensorPipeline.Output) -> Void) {
        source.start()
        let thread = Thread { [self] in
            defer { finished.signal() }
            if let why = source.cpu.pinCurrentThread() { logger.warning("sensor.cpu: not pinned: \(why)") }
            _ = run(while: { !self.stopping.load(ordering: .acquiring) }, prepare: { $0.onDetectorSample = onSample },
                    afterPass: afterPass, handle)
        }
        thread.name = "fallguard-samples"
        thread.start()
    }

    /// Stops the thread ``start(_:)`` began, then the source.
    public func stopAndWait() {
        stopping.store(true, ordering: .releasing)
        source.cancel()   // the thread may be waiting in the driver's buffer
        finished.wait()
        source.stopAndWait()
    }

    /// Runs the loop on this thread while `keepGoing` says so (the caller starts and stops the
    /// source) and returns the pipeline, for its counters. `prepare` sets up the pipeline's
    /// per-sample hooks; `afterPass` runs after every pass (the watchdog).
    ///
    /// One pass per delivery: with the IIO source this thread itself waits in the driver's
    /// buffer, so a buffered batch (0.4 s at 40 Hz) or a polled sample wakes it once. Without
    /// data a pass still comes every batch period plus ``IIOAccelerometer/stallMargin``
    /// (0.75 s at 40 Hz buffered, 0.25 s at most for the other sources), so the stall check
    /// (1 s) fires by 1.5 s without samples and the systemd watchdog (`WatchdogSec=`, pinged from
    /// `afterPass`) hears from this thread at least every 0.75 s while it is alive.
    @discardableResult
    public func run(while keepGoing: () -> Bool, prepare: (inout SensorPipeline) -> Void = { _ in },
                    afterPass: () -> Void = {}, _ handle: (SensorPipeline.Output) -> Void) -> SensorPipeline? {
        guard let first = takePendingDetector() else { return nil }
        var pipeline = SensorPipeline(source: source, detector: first)
        prepare(&pipeline)
        while keepGoing() {
            if let next = takePendingDetector() { pipeline.replaceDetector(next) }
            let before = pipeline.rawSamples
            pipeline.poll(now: MonotonicClock.seconds()) { output in
                switch output {
                case let .opened(info):
                    device.withLock { $0.info = info }
                case let .health(change):
                    device.withLock { d in
                        d.problems.removeAll { $0 == change.problem }
                        if change.isFault { d.problems.append(change.problem) }
                        d.problems.sort { $0.rawValue < $1.rawValue }
                    }
                case .detection:
                    break
                }
                handle(output)
            }
            rawSamples.wrappingIncrement(by: pipeline.rawSamples - before, ordering: .relaxed)
            afterPass()
            source.waitForData(timeout: 0.25)   // see above: a pass at least every 0.75 s
        }
        return pipeline
    }
}

extension ReplaySource {
    /// A recording file played in real time as the sensor (`sensor.replay`, `alarm --recording`):
    /// a file that cannot be read is exit status 66 (EX_NOINPUT), one without samples 65
    /// (EX_DATAERR). Its samples go through the same ``SensorLoop`` as a live sensor's.
    public static func file(_ path: String) throws(DaemonStartError) -> ReplaySource {
        let samples: [AccelerationSample]
        do { samples = try RecordingFile.read(path: path).samples } catch {
            throw DaemonStartError(description: "\(error)", status: 66)
        }
        guard !samples.isEmpty else { throw DaemonStartError(description: "\(path) has no samples", status: 65) }
        return ReplaySource(name: (path as NSString).lastPathComponent, recording: samples)
    }
}
