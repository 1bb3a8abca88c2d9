import Foundation
import Testing

/// `fallguard run`, `check-config` and `status` as a person meets them: the binary, real files.
@Suite struct DaemonCommandTests {
    @Test func theExampleConfigurationChecksCleanWithItsCredentialsInTheEnvironment() throws {
        let example = repositoryRoot + "/deploy/fallguard.example.yaml"
        let ok = try fallguard(["check-config", "--config", example, "--no-hardware"],
                               environment: ["TWILIO_ACCOUNT_SID": "AC0123", "TWILIO_AUTH_TOKEN": "secret-token"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("OK"))
        // Without them: every missing credential named with its line, exit 78, no secret printed.
        let missing = try fallguard(["check-config", "--config", example, "--no-hardware"],
                                    environment: ["TWILIO_ACCOUNT_SID": "", "TWILIO_AUTH_TOKEN": ""])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("fallguard.example.yaml:"))
        #expect(missing.stderr.contains("channels.sms.auth-token"))
    }

    @Test func aMalformedConfigurationStopsStartUpWithStatus78AndEveryProblemPlaced() throws {
        let dir = temporaryFolder()
        let path = dir + "/config.yaml"
        try """
            sensor:
              uri: "local:"
              mode: sometimes
            alarm:
              countdown: 2
            gpio:
              buzzr: {line: GPIO18}
            contacts:
              - name: Anna
                phone: "07700 900123"
            wearer: {name: Margaret}
            channels:
              sms: {type: twilio-sms, account-sid: AC1, auth-token: "hunter2-secret", from: "+447700900999"}
              call: {type: twilio-call, account-sid: AC1, auth-token: "hunter2-secret", from: "+447700900999"}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        for command in [["run", "--config", path, "--duration", "1"], ["check-config", "--config", path, "--no-hardware"]] {
            let r = try fallguard(command)
            #expect(r.status == 78, "\(command[0]): \(r.stderr)")
            #expect(r.stderr.contains("\(path):3: sensor.mode"), "\(r.stderr)")
            #expect(r.stderr.contains("\(path):5: alarm.countdown"), "\(r.stderr)")
            #expect(r.stderr.contains("\(path):7: gpio.buzzr: unknown key"), "\(r.stderr)")
            #expect(r.stderr.contains("contacts.0.phone"), "\(r.stderr)")
            #expect(!r.stderr.contains("hunter2-secret"), "a secret in an error message")
        }
    }

    @Test func theDemoDetectsTheBundledFallStartsTheCountdownAndShowsItInTheStatus() throws {
        let state = temporaryFolder()
        let r = try fallguard(["run", "--duration", "13", "--state", state])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("monitoring: replay"), "\(r.stderr)")
        #expect(r.stderr.contains("fall suspected"), "\(r.stderr)")
        // Stopped during the countdown: nobody aborted, so the alert went to the outbox.
        #expect(r.stderr.contains("shutting down during the countdown"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: state + "/outbox.sqlite"))
        let incidents = try String(contentsOfFile: state + "/incidents.jsonl", encoding: .utf8)
        #expect(incidents.contains("\"fall-suspected\""))
        let status = try fallguard(["status", "--state", state])
        #expect(status.status == 3, "the daemon has stopped")
        #expect(status.stdout.contains("state: countdown, incident FG-1"), "\(status.stdout)")
    }
}

/// A power cut or `kill -9` during the countdown must not lose the fall: the alert was
/// committed (held) when the countdown began, and the next start sends it when the countdown
/// would have ended.
@Suite struct DaemonCrashDuringCountdownTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv").path

    @Test func killedDuringTheCountdownTheNextStartSendsTheFallAlert() throws {
        let folder = temporaryFolder()
        let state = folder + "/state", alerts = folder + "/alerts.jsonl", config = folder + "/fallguard.yaml"
        try """
            sensor: {replay: "\(Self.fixture)"}
            gpio: {enabled: false}
            alarm: {countdown: 5, final-phase: 2}
            state: {directory: "\(state)"}
            metrics: {enabled: false}
            wearer: {name: Test Wearer, location: the lab}
            channels:
              pager: {type: exec, command: ["/bin/sh", "-c", "cat >> \(alerts); echo >> \(alerts)"]}
            policy:
              fall: {primary: [], others: [], broadcast: [pager]}
              help-requested: {primary: [], others: [], broadcast: [pager]}
              resolved: {primary: [], others: [], broadcast: [pager]}
              device-problem: {primary: [], others: [], broadcast: [pager]}
              heartbeat: {primary: [], others: [], broadcast: [pager]}
            """.write(toFile: config, atomically: true, encoding: .utf8)

        // First run: killed 1 s into the countdown (the fall is detected about 8.2 s in).
        let p = Process()
        p.executableURL = URL(fileURLWithPath: fallguardBinary)
        p.arguments = ["run", "--config", config]
        let log = folder + "/first.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: log)
        p.standardError = FileHandle(forWritingAtPath: log)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        func first() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        let deadline = Date().addingTimeInterval(30)
        while !first().contains("countdown armed"), Date() < deadline { usleep(50_000) }
        usleep(1_000_000)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(first().contains("countdown armed"), "\(first())")
        #expect(p.terminationReason == .uncaughtSignal)
        #expect(!FileManager.default.fileExists(atPath: alerts), "nothing sent during the countdown")

        // Second run: the held alert goes out when the countdown would have ended (+ the margins,
        // about 11 s in); the second run's own fall (8.2 s in) is FG-2, sent at its expiry.
        let second = try fallguard(["run", "--config", config, "--duration", "16"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("incident=FG-1") && second.stderr.contains("a countdown was interrupted"), "\(second.stderr)")
        let sent = (try? String(contentsOfFile: alerts, encoding: .utf8)) ?? ""
        let incidents = try sent.split(separator: "\n").map { line -> String in
            let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let alert = try #require(json["alert"] as? [String: Any])
            #expect(alert["kind"] as? String == "fall")
            return alert["incident"] as? String ?? "?"
        }
        #expect(incidents == ["FG-1", "FG-2"], "\(sent)\n\(second.stderr)")
    }
}

/// SIGHUP applies new notifier settings to the next alert without a restart.
@Suite struct DaemonReloadTests {
    @Test func aSIGHUPBeforeTheFallSendsItsAlertThroughTheNewChannelWithTheNewWearer() throws {
        let folder = temporaryFolder()
        let state = folder + "/state", config = folder + "/fallguard.yaml"
        func write(wearer: String, file: String, mqttPort: Int? = nil) throws {
            try """
                sensor: {replay: "\(DaemonCrashDuringCountdownTests.fixture)"}
                gpio: {enabled: false}
                alarm: {countdown: 5, final-phase: 2}
                state: {directory: "\(state)"}
                metrics: {enabled: false}
                wearer: {name: \(wearer), location: the lab}
                channels:
                  pager: {type: exec, command: ["/bin/sh", "-c", "cat >> \(folder)/\(file); echo >> \(folder)/\(file)"]}
                policy:
                  fall: {primary: [], others: [], broadcast: [pager]}
                  help-requested: {primary: [], others: [], broadcast: [pager]}
                  resolved: {primary: [], others: [], broadcast: [pager]}
                  device-problem: {primary: [], others: [], broadcast: [pager]}
                  heartbeat: {primary: [], others: [], broadcast: [pager]}
                """.write(toFile: config, atomically: true, encoding: .utf8)
        }
        try write(wearer: "Before Reload", file: "old.jsonl")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: fallguardBinary)
        p.arguments = ["run", "--config", config, "--duration", "15"]
        let log = folder + "/run.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: log)
        p.standardError = FileHandle(forWritingAtPath: log)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        func output() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        var deadline = Date().addingTimeInterval(20)
        while !output().contains("monitoring:"), Date() < deadline { usleep(50_000) }
        try write(wearer: "After Reload", file: "new.jsonl")
        kill(p.processIdentifier, SIGHUP)
        deadline = Date().addingTimeInterval(5)
        while !output().contains("SIGHUP: reloaded"), Date() < deadline { usleep(50_000) }
        p.waitUntilExit()
        let text = output()
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("now in effect: notifiers (wearer), notifiers (channels)"), "\(text)")
        #expect(!text.contains("take effect after a restart"), "\(text)")
        #expect(text.contains("fall suspected"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/old.jsonl"), "the old channel got nothing")
        let sent = try String(contentsOfFile: folder + "/new.jsonl", encoding: .utf8)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(sent.split(separator: "\n").first.map(String.init)?.utf8 ?? "".utf8)) as? [String: Any])
        #expect((json["wearer"] as? [String: Any])?["name"] as? String == "After Reload", "\(json)")
        #expect(((json["message"] as? [String: Any])?["body"] as? String)?.contains("After Reload") == true, "\(json)")
    }
}
