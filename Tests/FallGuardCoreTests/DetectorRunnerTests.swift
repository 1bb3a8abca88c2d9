import FallGuardCore
import Foundation
import Testing
import FallGuardTestSupport

/// The one offline loop (``DetectorRunner``) on real recordings: the SisFall fixtures.
@Suite struct DetectorRunnerTests {
    func fixture(_ name: String) throws -> [AccelerationSample] {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fixtureFolder + "/" + name))
        return try bytes.withUnsafeBytes { b in try RecordingParser.parse(b) }.samples
    }

    /// `samples` moved `by` seconds later.
    func shifted(_ samples: [AccelerationSample], by dt: Double) -> [AccelerationSample] {
        samples.map { AccelerationSample(time: $0.time + dt, x: $0.x, y: $0.y, z: $0.z) }
    }

    @Test func aFortyHertzTrialReachesTheDetectorUnchanged() throws {
        // What makes trial-level scoring through the runner what it was without a resampler.
        for name in ["F01_SA02_R01.csv", "D04_SA09_R01.csv", "D07_SE01_R01.csv"] {
            let samples = try fixture(name)
            var seen: [AccelerationSample] = [], gaps = 0
            _ = DetectorRunner.detections(in: samples, configuration: try DetectorConfiguration()) { s, afterGap in
                seen.append(s)
                if afterGap { gaps += 1 }
            }
            #expect(seen == samples, "\(name)")
            #expect(gaps == 0)
        }
    }

    @Test func stopAtFirstEndsTheRunAtTheFirstDetection() throws {
        // The same fall twice, 30 s apart (beyond the 10 s refractory time): two detections.
        let fall = try fixture("F01_SA02_R01.csv")
        let twice = fall + shifted(fall, by: fall.last!.time + 0.025)
        let configuration = try DetectorConfiguration()
        let all = DetectorRunner.detections(in: twice, configuration: configuration, countdown: nil)
        #expect(all.count == 2)
        var last = -1.0
        let first = DetectorRunner.detections(in: twice, configuration: configuration, stopAtFirst: true) { s, _ in last = s.time }
        #expect(first == Array(all.prefix(1)))
        #expect(last == all[0].decisionTime, "no sample after the one that decided")
    }

    @Test func theDetectorStartsAfreshAfterAGap() throws {
        // A fall whose samples stop for 2 s ending half a second before the impact: the detector
        // must judge the impact without the 2 s before it, as if the recording began after the hole.
        let fall = try fixture("F01_SA02_R01.csv")
        let impact = try #require(peakMagnitudeTime(fall))
        let before = fall.filter { $0.time < impact - 2.5 }, after = fall.filter { $0.time >= impact - 0.5 }
        let configuration = try DetectorConfiguration()
        var afterGap: [Double] = []
        let found = DetectorRunner.detections(in: before + after, configuration: configuration) { s, gap in
            if gap { afterGap.append(s.time) }
        }
        #expect(afterGap == [after[0].time], "one gap, flagged at its first sample")
        let alone = DetectorRunner.detections(in: before, configuration: configuration)
            + DetectorRunner.detections(in: after, configuration: configuration)
        #expect(found == alone)
        // Without the reset, the history from before the hole would decide otherwise.
        var carried = configuration.makeDetector()
        var carriedFound: [FallSuspected] = []
        for s in before + after { if let d = carried.process(s) { carriedFound.append(d) } }
        #expect(carriedFound != found, "the gap must matter on this recording for the test to mean anything")
    }

    /// Accelerometer only (an ADXL345, or `--accelerometer-only` on a six-axis recording): the
    /// countdown's recovery watch sees what the detector sees. After a wall slide it wants the
    /// wearer to have moved: a gyroscope turn of 20 °/s does it, an unchanging |a| does not.
    @Test func theWatchOfAnAccelerometerOnlyDetectorReadsNoGyroscope() throws {
        /// Fires one wall-slide detection, upright before, at its 40th sample.
        struct SlideAtOneSecond: FallDetector {
            var n = 0
            mutating func process(_ sample: AccelerationSample) -> FallSuspected? {
                n += 1
                guard n == 40 else { return nil }
                var d = FallSuspected(detector: "slide", impactTime: sample.time, decisionTime: sample.time, peak: 1.5,
                                      phases: ["wall-slide"], features: [DetectionFeature("posture-change", 40, "deg")])
                d.gravityBefore = [0, 0, 1]
                return d
            }
            mutating func reset() { n = 0 }
        }
        // Standing, |a| exactly 1 g, turning at 20 °/s about the vertical for 10 s.
        let samples = (0..<400).map { AccelerationSample(time: Double($0) / 40, x: 0, y: 0, z: 1, gyro: AngularVelocity(x: 0, y: 0, z: 20)) }
        var six = SlideAtOneSecond()
        let withGyroscope = DetectorRunner.detections(in: samples, by: &six, rate: 40)
        #expect(withGyroscope.count == 1 && withGyroscope.first?.recoveredAfter != nil, "the gyroscope shows the move")
        var three = AccelerometerOnlyDetector(base: SlideAtOneSecond())
        let withoutGyroscope = DetectorRunner.detections(in: samples, by: &three, rate: 40)
        #expect(withoutGyroscope.count == 1 && withoutGyroscope.first?.recoveredAfter == nil, "no move an ADXL345 could see")
    }
}
