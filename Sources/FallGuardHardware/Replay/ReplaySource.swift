import Atomics
import FallGuardCore
import Foundation

/// A recording played as a live sensor, in real time (or `speed` times faster), for the
/// no-hardware demo and for tests of the whole daemon: the samples reach the ring on their
/// recording schedule, stamped with the monotonic time each was due, as an accelerometer's
/// driver stamps the moment it measured: a thread woken late delivers late, never a burst of
/// samples a fraction of a millisecond apart (which an incident's signal file could not hold).
///
/// When the recording ends the wearer does not vanish: the source goes on with the mean of its
/// last second (the posture the recording ended in) plus a small deterministic jitter, as a
/// real sensor at rest never repeats bit-identical readings. With `loop` it starts over instead.
public final class ReplaySource: SampleSource, @unchecked Sendable {
    // Sendable: the mutable state is touched only by the producer thread after start().
    public let samples: SPSCRingBuffer<AccelerationSample>
    public let events = SPSCRingBuffer<AccelerometerEvent>(minimumCapacity: 16)
    public let info: AccelerometerInfo
    private let recording: [AccelerationSample]
    private let speed: Double
    private let loop: Bool
    private let stop = ManagedAtomic<Bool>(false)
    private let doorbell = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    /// - Parameters:
    ///   - name: shown as the device name (e.g. the file name).
    ///   - recording: samples with times in seconds from any origin, at any steady rate.
    public init(name: String, recording: [AccelerationSample], speed: Double = 1, loop: Bool = false,
                capacity: Int = 1024) {
        precondition(!recording.isEmpty, "a replay needs samples")
        self.recording = recording
        self.speed = max(speed, 1e-3)
        self.loop = loop
        samples = SPSCRingBuffer(minimumCapacity: capacity)
        let rate = Self.rate(of: recording)
        info = AccelerometerInfo(name: name, id: "replay0", uri: "replay:", mode: .polled, trigger: nil,
                                 samplingFrequency: rate, availableFrequencies: [rate],
                                 scale: standardGravity / 1000, scaleG: 0.001, availableScales: [],
                                 mountMatrix: nil, hasTimestamp: false,
                                 // A six-axis recording plays as a sensor with a gyroscope; its
                                 // "count" is the file's resolution (Recording.gyroDigits: 0.01 °/s).
                                 gyroscope: recording.allSatisfy { $0.gyro != nil }
                                     ? GyroscopeInfo(scale: 0.01 / degreesPerRadian, rangeDPS: nil) : nil)
    }

    public func start() {
        started = true
        let t = Thread { [self] in run() }
        t.name = "fallguard-replay"
        t.start()
    }

    public func stopAndWait() {
        stop.store(true, ordering: .releasing)
        if started { finished.wait() }
        started = false
    }

    public func waitForData(timeout: Double) {
        _ = doorbell.wait(timeout: .now() + timeout)
    }

    private func run() {
        defer { finished.signal() }
        events.push(.opened(info))
        doorbell.signal()
        let t0 = recording[0].time
        let period = 1 / info.samplingFrequency!
        let restSamples = recording.suffix(max(1, Int(saturating: info.samplingFrequency!)))
        let rest = restSamples.reduce((0.0, 0.0, 0.0)) { ($0.0 + $1.x, $0.1 + $1.y, $0.2 + $1.z) }
        let n = Double(restSamples.count)
        var jitter = SplitMix(seed: 0x5eed)
        let startNs = MonotonicClock.nanoseconds()
        var index = 0
        var offset = 0.0   // recording time at which the current pass started
        while !stop.load(ordering: .relaxed) {
            let dueTime: Double   // recording seconds since start
            var sample: AccelerationSample
            if index < recording.count {
                sample = recording[index]
                dueTime = offset + (sample.time - t0)
            } else if loop {
                offset += recording.last!.time - t0 + period
                index = 0
                continue
            } else {
                dueTime = offset + (recording.last!.time - t0) + Double(index - recording.count + 1) * period
                sample = AccelerationSample(time: 0, x: rest.0 / n + noise(&jitter), y: rest.1 / n + noise(&jitter),
                                            z: rest.2 / n + noise(&jitter))
                // A six-axis recording rests with a gyroscope too: still, only its noise (±0.1 °/s).
                if recording.last?.gyro != nil {
                    sample.gyro = AngularVelocity(x: 50 * noise(&jitter), y: 50 * noise(&jitter), z: 50 * noise(&jitter))
                }
            }
            let dueNs = Int64(saturating: Double(startNs) + dueTime / speed * 1e9)   // any recording's times: no trap
            MonotonicClock.sleep(until: dueNs)
            if stop.load(ordering: .relaxed) { break }
            sample.time = Double(dueNs) * 1e-9
            samples.push(sample)
            doorbell.signal()
            index += 1
        }
    }

    /// Samples per second: the median spacing of the recording's timestamps.
    static func rate(of recording: [AccelerationSample]) -> Double { Resampler.rate(of: recording) }
}

/// The resting jitter: uniform in ±0.002 g.
private func noise(_ g: inout SplitMix) -> Double { (g.unit() - 0.5) * 0.004 }


