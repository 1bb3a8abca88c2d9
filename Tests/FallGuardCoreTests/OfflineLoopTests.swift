import Foundation
import Testing
import FallGuardTestSupport

/// Issue 38: one offline loop over a fall detector. A detector's `process` is called in Sources
/// only by ``DetectorRunner`` (every offline path) and the live `SensorPipeline` (the daemon's
/// `SensorLoop`), so that what a sample carries is taught to the detectors in one place.
@Suite struct OfflineLoopTests {
    /// The two loops allowed to feed a fall detector.
    static let loops: Set = ["Sources/FallGuardCore/DetectorRunner.swift", "Sources/FallGuardHardware/IIO/SensorPipeline.swift"]
    /// What else has a `process(_:)`, none of them a `FallDetector`: the resampler and the
    /// wearer-activity detectors (`WalkingDetector`, `NotWornDetector`, the daemon's `WearWatch`,
    /// `UprightLearner`).
    static let notFallDetectors: Set = ["resampler", "walking", "notWorn", "wear", "recovery", "upright"]

    @Test func onlyTheRunnerAndTheLiveLoopFeedAFallDetector() throws {
        let sources = repositoryRoot + "/Sources"
        let files = try #require(FileManager.default.subpaths(atPath: sources)).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 50, "the Sources tree was found")
        let call = /([A-Za-z_][A-Za-z0-9_]*)\??\s*\.\s*process\s*\(/
        var calls = 0, strays: [String] = []
        for file in files where !Self.loops.contains("Sources/" + file) {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            guard text.contains("process") else { continue }
            // A detector that wraps another (`AccelerometerOnlyDetector`, `SixAxisDetector`) hands
            // each sample on inside its own one-line `func process(`: that is no loop.
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("process") && !line.contains("func process(") {
                for m in line.matches(of: call) {
                    calls += 1
                    if !Self.notFallDetectors.contains(String(m.1)) { strays.append("Sources/\(file):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))") }
                }
            }
        }
        #expect(calls >= 4, "the resampler and wearer-activity calls were seen")
        for loop in Self.loops {
            let text = try String(contentsOfFile: repositoryRoot + "/" + loop, encoding: .utf8)
            #expect(text.contains("detector.process("), "\(loop) is still the loop it was")
        }
        #expect(strays.isEmpty, """
            a loop over a detector's process outside DetectorRunner: run it through DetectorRunner.detections \
            (or, for something that is not a FallDetector, add its name to notFallDetectors):
            \(strays.joined(separator: "\n"))
            """)
    }
}
