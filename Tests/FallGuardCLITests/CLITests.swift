import Foundation
import Testing
import FallGuardTestSupport

@Suite struct CLITests {
    /// Seconds that cannot become nanoseconds are a usage error naming the option, never a trap.
    @Test(arguments: ["nan", "inf", "-1", "1e300", "soon"])
    func aDurationThatIsNotATimeIsAUsageError(_ value: String) throws {
        for command in ["alarm", "watch", "run", "gpio"] {
            let r = try fallguard([command, "--duration", value])
            #expect(r.status == 64, "\(command) --duration \(value): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("--duration"), "\(r.stderr)")
        }
    }

    @Test func helpExplainsEveryCommandAndOption() throws {
        let top = try fallguard("--help")
        #expect(top.status == 0)
        for c in ["replay", "evaluate", "cross-validate", "detectors"] { #expect(top.stdout.contains(c)) }
        let ev = try fallguard("evaluate", "--help")
        for o in ["--detector", "--set", "--json", "--skip-bad", "65"] { #expect(ev.stdout.contains(o), "\(o)") }
    }

    @Test func replayOfTheBundledDemoFindsTheFall() throws {
        let r = try fallguard("replay")
        #expect(r.status == 0)
        #expect(r.stdout.contains("FALL SUSPECTED"))
        #expect(r.stdout.contains("1 detection."))
    }

    /// A 50 Hz recording (UCI HAPT) is judged on the 40 Hz grid the bridge's pipeline gives the
    /// detector, as `evaluate` judges it: U06's hard set-down at 525.9 s is found by the strong
    /// tier only when its free-fall check is loosened (DailyLivingTests), and not with the defaults.
    @Test func replayResamplesAsTheBridgeDoes() throws {
        let file = dailyFixtureFolder + "/U06-exp2-500-545s.csv"
        let loose = try fallguard("replay", file, "--set", "strong-free-fall=1.5")
        #expect(loose.status == 0, "\(loose.stderr)")
        #expect(loose.stdout.contains("1 detection.") && loose.stdout.contains("impact at 525.9"), "\(loose.stdout)")
        #expect(try fallguard("replay", file).stdout.contains("No fall detected."))
    }

    @Test func replayPrintsTimeAndReasons() throws {
        let r = try fallguard("replay", fixtureFolder + "/F05_SA03_R02.csv", "--detector", "sum-abs", "--set", "threshold=4.5")
        #expect(r.status == 0)
        #expect(r.stdout.contains("sum-abs (threshold=4.5)"))
        #expect(r.stdout.contains("impact") && r.stdout.contains(" g"))
    }

    @Test func evaluateJSONHasTheDocumentedFields() throws {
        let r = try fallguard("evaluate", fixtureFolder, "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        for key in ["sensitivity", "specificity", "accuracy", "falls", "adls", "false_alarms_per_hour", "by_code", "delay_s"] {
            #expect(obj[key] != nil, "\(key)")
        }
        #expect(obj["falls"] as? Int == 6)
        #expect(obj["adls"] as? Int == 8)
        #expect((obj["sensitivity"] as? Double).map { $0 >= 0 && $0 <= 100 } == true)
    }

    @Test func evaluateStopsOnAMalformedFileWithItsLine() throws {
        let dir = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: fixtureFolder + "/F01_SA02_R01.csv", toPath: dir + "/F01_SA02_R01.csv")
        try "x_g,y_g,z_g\n0,0,1\n0,0\n".write(toFile: dir + "/D02_SA02_R01.csv", atomically: true, encoding: .utf8)
        let r = try fallguard("evaluate", dir)
        #expect(r.status == 65)
        #expect(r.stderr.contains(dir + "/D02_SA02_R01.csv:3:"))
        let skip = try fallguard("evaluate", dir, "--skip-bad")
        #expect(skip.status == 0)
        #expect(skip.stdout.contains("Skipped 1"))
        #expect(skip.stdout.contains("D02_SA02_R01.csv:3"))
    }

    @Test func evaluateRefusesAFolderWithoutTrials() throws {
        let dir = temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try fallguard("evaluate", dir)
        #expect(r.status == 66)
        #expect(r.stderr.contains("no labelled trials"))
        #expect(!r.stdout.contains("100"))
    }

    @Test func unknownDetectorOrSettingIsAUsageError() throws {
        let a = try fallguard("evaluate", fixtureFolder, "--detector", "magic")
        #expect(a.status == 64)
        #expect(a.stderr.contains("unknown detector 'magic'"))
        let b = try fallguard("replay", "--set", "nonsense=1")
        #expect(b.status == 64)
        #expect(b.stderr.contains("nonsense"))
    }

    @Test func replayOfAMissingFileSaysSo() throws {
        let r = try fallguard("replay", "/nonexistent/F01.csv")
        #expect(r.status == 65)
        #expect(r.stderr.contains("/nonexistent/F01.csv"))
    }

    /// Issue 14: numbers that would overflow a nanosecond count or a sleep are usage errors.
    @Test(arguments: [["gpio", "--debounce-ms", "99999999999999"], ["gpio", "--long-press", "inf"], ["gpio", "--tone-hz=0"],
                      ["watch", "--rate", "inf"], ["watch", "--rate", "nan"], ["outbox-run", "--state-dir", "/tmp", "--enqueue=-1"],
                      ["outbox-run", "--state-dir", "/tmp", "--interval-ms", "1e300"], ["outbox-run", "--state-dir", "/tmp", "--countdown-ms=-5"]])
    func aNumberOutsideItsRangeIsAUsageError(_ arguments: [String]) throws {
        let r = try fallguard(arguments)
        let option = arguments.first { $0.hasPrefix("--") && $0 != "--state-dir" }!.split(separator: "=")[0]
        #expect(r.status == 64, "\(arguments): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains(option), "\(r.stderr)")
    }

    /// Issue 14: a reading no accelerometer makes (1e17 g reached the number formatter) stops
    /// at its line, as every malformed recording does.
    @Test func aReadingBeyondAnyAccelerometerIsAMalformedLine() throws {
        let dir = TempDirectory()
        let file = dir.write("F01_SA01_R01.csv", "x_g,y_g,z_g\n0,0,1\n1e17,0,1\n")
        for command in [["evaluate", dir.path], ["replay", file]] {
            let r = try fallguard(command)
            #expect(r.status == 65, "\(command[0]): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("\(file):3:"), "\(r.stderr)")
        }
    }

    /// Issue 14: `policy.retry.initial` above a day trapped check-config.
    @Test func checkConfigPlacesARetryLongerThanADay() throws {
        let dir = TempDirectory()
        let file = dir.write("config.yaml", """
            wearer: {name: Margaret}
            contacts: [{name: Anna, phone: "+447700900001"}]
            channels: {console: {type: console}}
            policy:
              fall: {primary: [], others: [], broadcast: [console]}
              help-requested: {primary: [], others: [], broadcast: [console]}
              retry: {initial: 90000, max: 60}
            """, mode: 0o600)
        let r = try fallguard(["check-config", "--config", file, "--no-hardware"])
        #expect(r.status == 78, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("\(file):7: policy.retry.initial"), "\(r.stderr)")
    }

    /// Issue 29: a misspelt word stops start-up (78) with the words and the closest one.
    @Test func checkConfigSuggestsTheClosestWord() throws {
        let dir = TempDirectory()
        let file = dir.write("config.yaml", "log: {level: info}\ngpio:\n  buzzer: {type: pasive}\n", mode: 0o600)
        let r = try fallguard(["check-config", "--config", file, "--no-hardware"])
        #expect(r.status == 78, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("1 configuration error"), "\(r.stderr)")   // the word alone stops start-up
        #expect(r.stderr.contains("\(file):3: gpio.buzzer.type: expected one of active, passive, found 'pasive' (did you mean 'passive'?)"),
                "\(r.stderr)")
    }

    /// Issue 30: a station's file is checked as `fallguard station` reads it: 0 when good, 78
    /// with FILE:LINE and did-you-mean when not.
    @Test func checkConfigChecksAStationsFile() throws {
        let dir = TempDirectory()
        let good = dir.write("station.yaml", """
            station:
              broker: {host: 127.0.0.1}
              acknowledge-secret: one-secret-for-the-home-0123
              staff: [{user: anna, name: Anna Smith, password: anna-password}]
              state-directory: \(dir.path)/state
              history-days: 14
            """, mode: 0o600)
        let ok = try fallguard(["check-config", "--config", good])
        #expect(ok.status == 0, "\(ok.status) \(ok.stderr)")
        #expect(ok.stdout.contains("\(good): OK, a station's file (1 warning)"), "\(ok.stdout)")
        #expect(ok.stderr.contains("\(good):5: warning: station.state-directory"), "the unit's StateDirectory: \(ok.stderr)")

        let bad = dir.write("bad.yaml", """
            station:
              broker: {host: 127.0.0.1}
              acknowledge-secret: one-secret-for-the-home-0123
              staff: [{user: anna, name: Anna Smith, password: anna-password}]
              histroy-days: 3
              session-hours: 2
            """, mode: 0o600)
        let typo = try fallguard(["check-config", "--config", bad])
        #expect(typo.status == 78, "\(typo.status) \(typo.stderr)")
        #expect(typo.stderr.contains("\(bad):5: station.histroy-days: unknown key 'histroy-days' (did you mean 'history-days'?)"),
                "\(typo.stderr)")

        let range = dir.write("range.yaml", """
            station:
              broker: {host: 127.0.0.1, keepalve: 30}
              acknowledge-secret: short
              staff: [{user: anna, name: Anna Smith, password: anna-password}]
              history-days: 0
            """, mode: 0o600)
        let r = try fallguard(["check-config", "--config", range])
        #expect(r.status == 78, "\(r.status) \(r.stderr)")
        for expected in ["\(range):2: station.broker.keepalve: unknown key 'keepalve' (did you mean 'keepalive'?)",
                         "\(range):3: station.acknowledge-secret: must be at least 16 characters",
                         "\(range):5: station.history-days: 0 days is outside 1...366 days", "3 configuration errors"] {
            #expect(r.stderr.contains(expected), "\(expected) in \(r.stderr)")
        }
        #expect(!r.stderr.contains("unknown key 'station'"), "not read as a bridge's file: \(r.stderr)")
    }

    @Test func detectorsListsSettingsWithUnits() throws {
        let r = try fallguard("detectors")
        #expect(r.status == 0)
        #expect(r.stdout.contains("multiphase (default)"))
        #expect(r.stdout.contains("threshold") && r.stdout.contains(" g "))
    }
}

/// libcurl and the libraries it pulls in (GnuTLS, Kerberos, LDAP, ...) are opened only when an
/// e-mail channel is used: the program must not list it as NEEDED, or every bridge would map it.
@Suite struct LinkedLibraryTests {
    @Test func theProgramDoesNotLinkLibcurl() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        p.arguments = ["-d", fallguardBinary]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let needed = text.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libiio") }, "readelf lists the libraries: \(needed)")
        #expect(!needed.contains { $0.contains("libcurl") }, "\(needed)")
    }
}
