import FallGuardConfig
import FallGuardCore
import Foundation
import Testing
import FallGuardTestSupport

@Suite("deploy/fallguard.example.yaml")
struct ExampleFileTests {
    static let example = repositoryRoot + "/deploy/fallguard.example.yaml"

    @Test func exampleLoadsWithoutAnyProblemAndStatesTheDefaults() throws {
        // The example reads the Twilio credentials from the environment, as a Pi would.
        var doc = ConfigDocument.load(path: Self.example, environment: ["TWILIO_ACCOUNT_SID": "AC0", "TWILIO_AUTH_TOKEN": "t"])
        let sensor = doc.section(SensorSection.self, at: "sensor")
        let detector = doc.section(DetectorSection.self, at: "detector")
        let state = doc.section(StateSection.self, at: "state")
        let metrics = doc.section(MetricsSection.self, at: "metrics")
        let log = doc.section(LogSection.self, at: "log")
        // The other sections (alarm, gpio, the notifiers) are read by `fallguard run`; the CLI
        // tests check the whole file with `fallguard check-config`.
        #expect(doc.diagnostics.map(\.description) == [])
        // The file documents the defaults: it must decode to exactly what an empty file gives.
        #expect(sensor == SensorSection())
        #expect(detector == DetectorSection())
        #expect(state == StateSection())
        #expect(metrics == MetricsSection())
        #expect(log == LogSection())
    }

    @Test func exampleNamesEveryKeyOfTheSectionsItDocuments() throws {
        let text = try String(contentsOfFile: Self.example, encoding: .utf8)
        let keys: [String: [String]] = [
            "sensor": ["uri", "device", "mode", "range-g", "mount-matrix", "replay"],
            "detector": ["name", "settings"],
            "state": ["directory"],
            "metrics": ["enabled", "listen"],
            "log": ["level"],
        ]
        for (section, names) in keys {
            #expect(text.contains("\n\(section):\n"), "section \(section)")
            for k in names { #expect(text.contains("\n  \(k):"), "\(section).\(k)") }
        }
        for section in ["alarm", "gpio", "device", "wearer", "contacts", "channels", "policy", "templates"] {
            #expect(text.contains("\n\(section):"), "section \(section)")
        }
    }
}
