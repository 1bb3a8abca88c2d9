import Foundation
import Testing
import FallGuardTestSupport

/// `fallguard report` rendered by a real browser: Debian's chromium, headless.
@Suite(.serialized) struct ReportBrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The fixture trials, and one continuous recording of two of them (a fall and an ADL, 5 s
    /// apart) whose sidecar labels the fall 20 s off its impact: one missed fall, one false
    /// alarm. Its name and note try to smuggle markup into the page.
    static func dataset(_ dir: TempDirectory) throws -> String {
        let folder = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: fixtureFolder) {
            try FileManager.default.copyItem(atPath: fixtureFolder + "/" + name, toPath: folder + "/" + name)
        }
        var rows = ["t_s,x_g,y_g,z_g"], t = 0.0
        for trial in ["F01_SA02_R01.csv", "D01_SA08_R01.csv"] {
            let lines = try String(contentsOfFile: fixtureFolder + "/" + trial, encoding: .utf8).split(separator: "\n").dropFirst()
            for l in lines { rows.append(String(format: "%.4f,", t) + l); t += 0.025 }
            t += 5
        }
        try (rows.joined(separator: "\n") + "\n").write(toFile: folder + "/night<script>.csv", atomically: true, encoding: .utf8)
        try "t_s,label,note\n40,fall,<img src=x onerror=alert(1)>\n".write(toFile: folder + "/night<script>.labels.csv", atomically: true, encoding: .utf8)
        return folder
    }

    @Test func theReportLoadsInChromiumWithItsPlotsAndNoErrors() throws {
        guard let chromium = Self.chromium else {
            Issue.record("chromium is not installed: tools/setup-debian installs it (the report must be checked in a real browser)")
            return
        }
        let dir = TempDirectory("report")
        let folder = try Self.dataset(dir)
        let page = dir.path + "/report.html"
        let made = try fallguard("report", folder, "--out", page)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("8 plots (6 detected fall, 1 false alarm, 1 missed fall)"), "\(made.stdout)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(!html.contains("<script") && !html.contains("<img"), "text from files is escaped")
        #expect(html.contains("night&lt;script&gt;.csv") && html.contains("&lt;img src=x"))
        #expect(!html.contains("http") && !html.contains("<link") && !html.contains("url("), "self-contained: nothing to fetch")

        let flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
        let dom = try runCommand(chromium, flags + ["--dump-dom", "file://" + page])
        #expect(dom.status == 0, "\(dom.stderr.suffix(2000))")
        #expect(dom.stdout.components(separatedBy: "<svg").count - 1 == 8, "every plot is in the rendered page")
        #expect(dom.stdout.contains("id=\"summary\"") && dom.stdout.contains("id=\"activities\"") && dom.stdout.contains("id=\"events\""))
        let consoleErrors = dom.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") || $0.contains("Uncaught") }
        #expect(consoleErrors.isEmpty, "\(consoleErrors)")

        // A screenshot, kept as an artefact of the test run.
        let artifacts = repositoryRoot + "/.build/artifacts"
        try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
        let png = artifacts + "/field-test-report.png"
        try? FileManager.default.removeItem(atPath: png)
        let shot = try runCommand(chromium, flags + ["--screenshot=" + png, "--window-size=1100,2400", "file://" + page])
        #expect(shot.status == 0, "\(shot.stderr.suffix(2000))")
        let size = (try? FileManager.default.attributesOfItem(atPath: png)[.size] as? Int) ?? 0
        #expect(size > 20_000, "screenshot \(png): \(size) bytes")
        print("screenshot: \(png)")
    }
}
