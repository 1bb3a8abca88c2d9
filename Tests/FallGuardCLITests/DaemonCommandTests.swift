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
