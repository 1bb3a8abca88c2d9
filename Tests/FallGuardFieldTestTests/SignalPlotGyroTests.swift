import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// The report's and the incident page's plot show |ω| where the samples carry a gyroscope's
/// reading (issue 35), on a scale of its own; a three-axis stretch is drawn as before.
@Suite struct SignalPlotGyroTests {
    func plot(accelerometerOnly: Bool) throws -> String {
        let samples = try RecordingFile.read(path: sixAxisFixtures + "/F15_SA01_R01.csv").samples
        return SignalPlot(samples: accelerometerOnly ? samples.map(\.accelerometerOnly) : samples, from: 4, to: 10).svg()
    }

    @Test func aSixAxisStretchShowsTheAngularVelocity() throws {
        let svg = try plot(accelerometerOnly: false)
        let path = try #require(svg.firstMatch(of: #/class="angular-velocity"[^>]* d="(M[^"]+)"/#)?.output.1, "\(svg.prefix(400))")
        #expect(path.count > 100, "a path through the stretch's samples: \(path.prefix(80))")
        #expect(svg.contains("|ω| in °/s, right: purple"))
        // F15's turn peaks at 240.8 °/s (6.8 s): the scale's top is 1.1 × that, labelled every 100 °/s.
        #expect(svg.contains(">200</text>") && !svg.contains(">300</text>"), "\(svg.suffix(900))")
        // The path's highest point is the peak: 240.8 / 264.9 of the plot's height from its bottom.
        let ys = path.matches(of: #/l-?\d+ (-?\d+)/#).map { Int($0.output.1)! }
        let start = Int(path.firstMatch(of: #/M\d+ (\d+)/#)!.output.1)!
        var y = start, highest = start
        for d in ys { y += d; highest = min(highest, y) }
        let plotH = 170.0 - 18 - 4, bottom = 4 + plotH
        #expect(abs((bottom - Double(highest)) / plotH - 240.8 / (240.8 * 1.1)) < 0.02, "peak drawn at y \(highest)")
    }

    @Test func aThreeAxisStretchHasNoAngularVelocity() throws {
        let svg = try plot(accelerometerOnly: true)
        #expect(!svg.contains("angular-velocity") && !svg.contains("°/s"))
        #expect(svg.contains("class=\"magnitude\"") && svg.contains("class=\"mean\""))
    }
}
