import FallGuardConfig
import FallGuardCore
import Testing
import FallGuardTestSupport

/// Loads `yaml` from a file in `dir`, reads the five sections this module defines, and
/// returns the diagnostics as printed (`FILE:LINE: key: message`) with the directory cut.
private func check(_ yaml: String, in dir: TempDirectory = TempDirectory(), environment: [String: String] = [:])
    -> (lines: [String], doc: ConfigDocument, sensor: SensorSection?, detector: DetectorSection?) {
    let file = dir.write("config.yaml", yaml)
    var doc = ConfigDocument.load(path: file, environment: environment)
    let sensor = doc.section(SensorSection.self, at: "sensor")
    let detector = doc.section(DetectorSection.self, at: "detector")
    _ = doc.section(StateSection.self, at: "state")
    _ = doc.section(MetricsSection.self, at: "metrics")
    _ = doc.section(LogSection.self, at: "log")
    let lines = doc.finish().map { $0.description.replacingOccurrences(of: dir.path + "/", with: "") }
    return (lines, doc, sensor, detector)
}

@Suite("Configuration file")
struct ConfigDocumentTests {
    @Test func completeValidFileParsesWithEveryValue() {
        let r = check("""
            sensor:
              uri: "ip:192.0.2.10"
              device: mpu6050
              mode: polled
              range-g: 8
              mount-matrix: [[0, 1, 0], [1, 0, 0], [0, 0, -1]]
            detector:
              name: sum-abs
              settings:
                threshold: 3.5
            state:
              directory: /var/lib/fallguard
            metrics:
              enabled: false
              listen: "[::1]:9500"
            log:
              level: debug
            """)
        #expect(r.lines == [])
        #expect(r.sensor?.uri == "ip:192.0.2.10")
        #expect(r.sensor?.device == "mpu6050")
        #expect(r.sensor?.mode == .polled)
        #expect(r.sensor?.rangeG == 8)
        #expect(r.sensor?.mountMatrix?[2] == [0, 0, -1])
        #expect(r.detector?.name == "sum-abs")
        let detector = try? r.detector?.configuration()
        #expect(detector?.settings["threshold"] == 3.5)
        #expect(!r.doc.hasErrors)
    }

    @Test func unquotedLocalSchemeIsALibiioURI() {
        let r = check("sensor:\n  uri: local\n")
        #expect(r.lines == [])
        #expect(r.sensor?.uri == "local:")
        // Unquoted `local:` at the end of a line is a YAML key: a syntax error with its place.
        let bad = check("sensor:\n  uri: local:\n")
        #expect(bad.lines == ["config.yaml:2:13: YAML syntax: mapping values are not allowed in this context"])
    }

    @Test func missingSectionsAndKeysTakeTheirDefaults() {
        let r = check("sensor:\n  device: adxl345\n")
        #expect(r.lines == [])
        #expect(r.sensor?.uri == "local:")
        #expect(r.sensor?.mode == .auto)
        #expect(r.sensor?.rangeG == 16)
        #expect(r.detector?.name == DetectorCatalog.defaultName)
        #expect(r.detector?.settings == [:])
    }

    /// A file without `wearer:` (a key without a default) once also had every section it holds
    /// reported as an unknown key ("known: credentials-file"): the whole file could not be
    /// built, so nothing had claimed its keys. Now only the missing key and real problems.
    @Test func aMissingRequiredKeyDoesNotMakeTheOtherSectionsUnknown() {
        let (_, diagnostics) = DaemonConfiguration.load(yaml: """
            sensor:
              mode: bufered
            sensr: {}
            channels:
              yes: {type: console}
            """, path: "config.yaml", environment: [:])
        let lines = diagnostics.map(\.description)
        #expect(lines.contains { $0.contains("wearer: missing") }, "\(lines)")
        #expect(lines.contains { $0.contains("sensor.mode") && $0.contains("did you mean 'buffered'") }, "\(lines)")
        #expect(lines.contains { $0.contains("unknown key 'sensr'") && $0.contains("did you mean 'sensor'") }, "\(lines)")
        #expect(!lines.contains { $0.contains("unknown key 'sensor'") || $0.contains("unknown key 'channels'") }, "\(lines)")
    }

    @Test func yamlSyntaxErrorGivesLineAndColumn() {
        let r = check("""
            sensor:
              uri: local
             device: adxl345
            """)
        #expect(r.lines == ["config.yaml:3:2: YAML syntax: did not find expected key (while parsing a block mapping at line 1)"])
        #expect(r.doc.hasErrors)
    }

    @Test func duplicateKeyIsASyntaxProblemWithItsLine() {
        let r = check("""
            log:
              level: info
              level: debug
            """)
        #expect(r.lines.count == 1)
        #expect(r.lines.first?.contains("duplicate key 'level'") == true, "\(r.lines)")
        #expect(r.lines.first?.hasPrefix("config.yaml:") == true)
    }

    @Test func everyTypeErrorIsReportedWithItsKeyPathAndLineAndDefaultsFillIn() {
        let r = check("""
            sensor:
              uri: local
              range-g: high
              mode: fast
              mount-matrix: 3
            metrics:
              enabled: maybe
            """)
        #expect(r.lines == [
            "config.yaml:3: sensor.range-g: expected a number, found 'high'",
            "config.yaml:4: sensor.mode: expected one of auto, buffered, polled, found 'fast'",
            "config.yaml:5: sensor.mount-matrix: expected a list, found '3'",
            "config.yaml:7: metrics.enabled: expected true or false, found 'maybe'",
        ])
        #expect(r.sensor?.rangeG == 16)   // the default stands in for the bad value
        #expect(r.sensor?.mode == .auto)
    }

    @Test func aBadListElementDropsOnlyItsListAndTheRestIsStillChecked() {
        let r = check("""
            sensor:
              mount-matrix: [[1, 0, 0], [0, one, 0], [0, 0, 1]]
              range-g: 99
              device: mpu6050
            """)
        #expect(r.lines == [
            "config.yaml:2: sensor.mount-matrix.1.1: expected a number, found 'one'",
            "config.yaml:3: sensor.range-g: 99.0 g is outside 2.0...16.0 g",
        ])
        #expect(r.sensor?.device == "mpu6050")
        #expect(r.sensor?.mountMatrix == nil)
    }

    @Test func aSectionThatIsNotAMappingIsReported() {
        let r = check("sensor: 5\n")
        #expect(r.lines == ["config.yaml:1: sensor: expected a mapping (key: value lines), found '5'"])
        #expect(r.sensor == SensorSection())
    }

    @Test func unknownKeysAreFoundByTheRoundTripWithTheClosestKnownKey() {
        let r = check("""
            sensor:
              devcie: adxl345
              frobnicate: 1
            metrics:
              listen: 127.0.0.1:9466
            sensr:
              uri: local
            """)
        #expect(r.lines == [
            "config.yaml:2: sensor.devcie: unknown key 'devcie' (did you mean 'device'?)",
            "config.yaml:3: sensor.frobnicate: unknown key 'frobnicate' (known: cpu, device, mode, mount-matrix, range-g, replay, uri)",
            "config.yaml:6: sensr: unknown key 'sensr' (did you mean 'sensor'?)",
        ])
    }

    @Test func sectionValueChecksArePlacedOnTheirLines() {
        let r = check("""
            detector:
              name: multiphase
              settings:
                impact: 99
                impct: 1.7
            metrics:
              listen: "localhost:99999"
            state:
              directory: relative/dir
            """)
        #expect(r.lines.count == 4, "\(r.lines)")
        #expect(r.lines[0].hasPrefix("config.yaml:4: detector.settings.impact: setting 'impact' = 99.0 is outside"))
        #expect(r.lines[1].hasPrefix("config.yaml:5: detector.settings.impct: detector 'multiphase' has no setting 'impct'"))
        #expect(r.lines[2] == "config.yaml:7: metrics.listen: expected HOST:PORT with a port 1-65535 (e.g. 127.0.0.1:9466 or [::1]:9466), found 'localhost:99999'")
        #expect(r.lines[3] == "config.yaml:9: state.directory: must be an absolute path, found 'relative/dir'")
    }

    @Test func detectorSettingsMayBeKeyValueStringsAsOnTheCommandLine() throws {
        let r = check("detector:\n  name: multiphase\n  settings: [\"impact=1.75\", \"stillness = 0.3\"]\n")
        #expect(r.lines == [])
        #expect(r.detector?.settings == ["impact": 1.75, "stillness": 0.3])
        let bad = check("detector:\n  settings: [\"impact:1.75\"]\n")
        #expect(bad.lines == ["config.yaml:2: detector.settings: 'impact:1.75' is not of the form key=number"])
    }

    @Test func unknownDetectorNameIsReported() {
        let r = check("detector:\n  name: magic\n")
        #expect(r.lines == ["config.yaml:2: detector.name: expected one of \(DetectorCatalog.names.joined(separator: ", ")), found 'magic'"])
    }

    @Test func warningsDoNotStopStartUpButErrorsDo() {
        let allowed = DaemonConfiguration.load(yaml: "metrics:\n  listen: 0.0.0.0:9466\nweb:\n  allow-anonymous: true\n", path: "config.yaml").1
        #expect(allowed.map(\.description) == ["config.yaml:4: warning: web.allow-anonymous: 0.0.0.0 serves the page and the metrics (the wearer's falls, the contacts' names) beyond this machine without a password (allowed by allow-anonymous)"])
        var printed: [String] = []
        #expect(ConfigReport.printAndShouldStop(allowed) { printed.append($0) } == false)
        #expect(printed.count == 1)

        let bad = check("log:\n  level: loud\n")
        printed = []
        #expect(ConfigReport.printAndShouldStop(bad.doc.diagnostics) { printed.append($0) } == true)
        #expect(printed.first == "config.yaml:2: log.level: expected one of trace, debug, info, notice, warning, error, critical, found 'loud'\n"
            .replacingOccurrences(of: "config.yaml", with: bad.doc.path))
        #expect(printed.last?.contains("exit status 78") == true)
        #expect(ConfigReport.exitStatus == 78)
    }

    @Test func unreadableFileIsADiagnosticNamingIt() {
        var doc = ConfigDocument.load(path: "/nonexistent/fallguard.yaml", environment: [:])
        let all = doc.finish()
        #expect(all.map(\.description) == ["/nonexistent/fallguard.yaml: cannot read the configuration file: No such file or directory"])
    }
}


/// `web:` — who may reach the page and the metrics (issue 19).
@Suite struct WebSectionTests {
    static func diagnostics(_ yaml: String) -> [ConfigDiagnostic] { DaemonConfiguration.load(yaml: yaml, path: "config.yaml").1 }

    @Test func beyondLoopbackAPasswordIsRequiredAndTravelsOnlyOverTLSUnlessAllowed() {
        let open = Self.diagnostics("metrics:\n  listen: 192.168.1.20:9466\n")
        #expect(open.count == 1 && open[0].isError && open[0].description.contains("web.password: 192.168.1.20 serves the page"), "\(open)")
        #expect(Self.diagnostics("metrics:\n  listen: \"[::1]:9466\"\n").isEmpty, "loopback needs nothing")
        #expect(Self.diagnostics("metrics:\n  listen: 127.0.0.1:9466\nweb:\n  password: long-enough\n").isEmpty,
                "a password on loopback over plain HTTP never leaves the machine")
        let plain = Self.diagnostics("metrics:\n  listen: 0.0.0.0:9466\nweb:\n  password: long-enough\n")
        #expect(plain.count == 1 && plain[0].isError && plain[0].description.contains("in clear text") && plain[0].description.contains("allow-plain-http: true"), "\(plain)")
        let allowed = Self.diagnostics("metrics:\n  listen: 0.0.0.0:9466\nweb:\n  password: long-enough\n  allow-plain-http: true\n")
        #expect(allowed.count == 1 && !allowed[0].isError && allowed[0].description.hasPrefix("config.yaml:5: warning: web.allow-plain-http"), "\(allowed)")
        let off = Self.diagnostics("metrics:\n  enabled: false\n  listen: 0.0.0.0:9466\nweb:\n  enabled: false\n")
        #expect(off.isEmpty, "no server, nothing to guard: \(off)")
    }

    @Test func badWebValuesNameTheirKey() {
        let d = Self.diagnostics("web:\n  password: short\n  tls-certificate: /nonexistent/cert.pem\n  session-hours: 0\n  allow-plain-htp: true\n")
        let text = d.map(\.description)
        #expect(text.contains("config.yaml:2: web.password: at least 8 characters, found 5"), "\(text)")
        #expect(text.contains { $0.contains("web.tls-key: tls-certificate and tls-key go together") }, "\(text)")
        #expect(text.contains("config.yaml:3: web.tls-certificate: cannot read /nonexistent/cert.pem"), "\(text)")
        #expect(text.contains("config.yaml:4: web.session-hours: 0.0 h is outside 0.1...720.0 h"), "\(text)")
        #expect(text.contains { $0.hasPrefix("config.yaml:5: web.allow-plain-htp: unknown key") }, "\(text)")
        #expect(!text.joined().contains("short"), "the password is never printed")
    }
}
