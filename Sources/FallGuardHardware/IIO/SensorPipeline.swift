import FallGuardCore

/// The consumer side of the sensor: drains the source's ring, watches the raw stream's health,
/// resamples to 40 Hz and feeds the detector. Called from one thread (the sensor loop) once per
/// delivery: a buffered batch (0.4 s of samples at 40 Hz) or one polled sample.
public struct SensorPipeline {
    public enum Output: Sendable {
        case opened(AccelerometerInfo)
        case health(SensorHealthChange)
        case detection(FallSuspected)
    }

    static let dataFaults: Set<SensorProblem> = [.stuck, .saturated, .implausible]

    public let source: any SampleSource
    public private(set) var detector: any FallDetector
    public private(set) var health: SensorHealthMonitor
    public private(set) var resampler: Resampler?
    /// Raw samples consumed since start.
    public private(set) var rawSamples = 0
    /// 40 Hz samples fed to the detector since start.
    public private(set) var detectorSamples = 0
    private var gapsSeen = 0
    /// The wearer's upright, learned while they walk, handed to the detector once a second.
    private var upright = UprightLearner()
    /// A stuck, saturated or implausible fault is active.
    private var untrustworthy = false

    /// Called with every raw sample as it is consumed (for recording and latency measurements).
    public var onRawSample: ((AccelerationSample) -> Void)?
    /// Called with every 40 Hz sample.
    public var onDetectorSample: ((AccelerationSample) -> Void)?

    public init(source: any SampleSource, detector: any FallDetector, fullScaleG: Double = 16) {
        self.source = source
        self.detector = detector
        health = SensorHealthMonitor(limits: .init(fullScaleG: fullScaleG))
    }

    /// Swaps in another detector (a reloaded configuration); it starts with an empty history.
    public mutating func replaceDetector(_ new: any FallDetector) {
        detector = new
        detector.reset()
    }

    /// Drains what the source captured (for IIO on this same thread, in `waitForData`; a
    /// replay from its own thread) and checks for a stall at `now` (monotonic s).
    public mutating func poll(now: Double, _ emit: (Output) -> Void) {
        source.events.drain { event in
            switch event {
            case .opened(let info):
                health.restart()
                do {
                    resampler = try Resampler(inputRate: info.samplingFrequency ?? detectorRate)
                } catch {
                    // The source checks the rate; one it let through must still not trap.
                    resampler = nil
                    for c in health.report(.implausible, at: now, detail: "\(info.name) sampling_frequency: \(error)") { emit(.health(c)) }
                }
                untrustworthy = !health.active.isDisjoint(with: Self.dataFaults)
                detector.reset()
                upright = UprightLearner()   // another device, or worn anew: learn it again
                gapsSeen = 0
                emit(.opened(info))
            case .failed(let error, _):
                let gone = error.message.contains("No such device") || error.message.contains("no IIO device")
                    || error.message.contains("no such accelerometer") || error.message.contains("No such file")
                for c in health.report(gone ? .disappeared : .ioError, at: now, detail: error.description) { emit(.health(c)) }
            }
        }
        source.samples.drain { s in
            rawSamples += 1
            onRawSample?(s)
            // Data that a fault makes untrustworthy neither feeds nor fires the detector, and
            // the detector starts afresh when such a fault begins or ends.
            var dataFaultsChanged = false
            for c in health.observe(s, now: now) {
                if Self.dataFaults.contains(c.problem) { dataFaultsChanged = true }
                emit(.health(c))
            }
            if dataFaultsChanged {
                detector.reset()
                untrustworthy = !health.active.isDisjoint(with: Self.dataFaults)
            }
            guard !untrustworthy else { return }
            resampler?.process(s) { r in
                detectorSamples += 1
                onDetectorSample?(r)
                upright.process(r)
                // Once a second; nil again once the learner forgot it (the device lay unworn).
                if detectorSamples % Int(detectorRate) == 0 { detector.learnedUpright(upright.upright) }
                if let d = detector.process(r) { emit(.detection(d)) }
            }
            if let r = resampler, r.gaps != gapsSeen {
                gapsSeen = r.gaps
                detector.reset()   // never judge windows across a hole in the data
            }
        }
        for c in health.check(now: now) {
            if Self.dataFaults.contains(c.problem) {
                detector.reset()
                untrustworthy = !health.active.isDisjoint(with: Self.dataFaults)
            }
            emit(.health(c))
        }
    }
}
