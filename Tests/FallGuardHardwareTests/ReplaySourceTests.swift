import FallGuardCore
import FallGuardFieldTest
@testable import FallGuardHardware
import Testing
import FallGuardTestSupport

/// The demo's sensor: the bundled real fall, played through the same ring and pipeline as an
/// accelerometer, 20 times faster than real time.
@Suite struct ReplaySourceTests {
    let fall = BundledRecordings.parse(BundledRecordings.demoFall).samples

    @Test func theBundledFallIsDetectedOnceThroughThePipeline() throws {
        let source = ReplaySource(name: "demo", recording: fall, speed: 20)
        var pipeline = SensorPipeline(source: source, detector: try DetectorConfiguration(name: "multiphase").makeDetector())
        var detections: [FallSuspected] = []
        var opened = 0
        var faults: [SensorHealthChange] = []
        source.start()
        let seconds = (fall.last!.time - fall[0].time) / 20 + 1.5   // the recording, then rest
        let end = MonotonicClock.nanoseconds() + Int64(seconds * 1e9)
        while MonotonicClock.nanoseconds() < end {
            pipeline.poll(now: MonotonicClock.seconds()) { output in
                switch output {
                case .opened: opened += 1
                case .detection(let d): detections.append(d)
                case .health(let c): faults.append(c)
                }
            }
            source.waitForData(timeout: 0.05)
        }
        source.stopAndWait()
        #expect(opened == 1)
        #expect(detections.count == 1)
        #expect(faults.isEmpty, "\(faults)")
        // Every sample of the recording reached the pipeline, then the resting posture followed.
        #expect(pipeline.rawSamples > fall.count)
        #expect(source.samples.overruns == 0)
    }

    @Test func afterTheEndTheWearerRestsWithJitterNotFrozenValues() throws {
        let short = Array(fall.prefix(80))
        let source = ReplaySource(name: "short", recording: short, speed: 40)
        source.start()
        var got: [AccelerationSample] = []
        let end = MonotonicClock.nanoseconds() + 1_000_000_000
        while MonotonicClock.nanoseconds() < end, got.count < 200 {
            source.samples.drain { got.append($0) }
            source.waitForData(timeout: 0.05)
        }
        source.stopAndWait()
        try #require(got.count >= 150)
        #expect(zip(got.prefix(80), short).allSatisfy { $0.x == $1.x && $0.y == $1.y && $0.z == $1.z })
        let rest = got.dropFirst(80)
        let last = short.suffix(40)
        let meanZ = last.map(\.z).reduce(0, +) / Double(last.count)
        #expect(rest.allSatisfy { abs($0.z - meanZ) <= 0.0021 })
        #expect(Set(rest.map(\.z)).count > rest.count / 2, "resting samples must not repeat bit for bit")
        // Times are monotonic-clock stamps, strictly increasing.
        #expect(zip(got.dropFirst(), got).allSatisfy { $0.time > $1.time })
    }

    /// Each sample carries the moment it was due, as a driver stamps its measurement: a thread
    /// woken late (here: the consumer takes them in bursts, and the machine is busy) never
    /// yields samples a fraction of a millisecond apart, which an incident's signal file could
    /// not hold (the recording reader refuses rates above 10 kHz; found by the page's test).
    @Test func samplesAreStampedWhenTheyWereDueNotWhenTheThreadWoke() throws {
        let source = ReplaySource(name: "demo", recording: fall, speed: 20)   // 800 samples/s
        source.start()
        var got: [AccelerationSample] = []
        let end = MonotonicClock.nanoseconds() + 1_000_000_000
        while MonotonicClock.nanoseconds() < end {
            source.samples.drain { got.append($0) }
            source.waitForData(timeout: 0.05)
        }
        source.stopAndWait()
        try #require(got.count >= 400)
        let recordingStep = (fall[1].time - fall[0].time) / 20
        let steps = zip(got.dropFirst(), got).map { $0.time - $1.time }
        #expect(steps.allSatisfy { abs($0 - recordingStep) < 2e-6 }, "min \(steps.min() ?? 0), max \(steps.max() ?? 0), want \(recordingStep)")
    }

    @Test func theRateIsTheMedianSpacing() {
        #expect(ReplaySource.rate(of: fall) == 40)
        let hundred = (0..<50).map { AccelerationSample(time: Double($0) / 100, x: 0, y: 0, z: 1) }
        #expect(ReplaySource.rate(of: hundred) == 100)
    }
}
