import FallGuardConfig
import FallGuardCore
import Foundation
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

/// The settings as `--settings-json` reads them: the configuration file's keys, in JSON.
func writeSettings(_ settings: NotificationSettings, to folder: String) throws -> String {
    let path = folder + "/settings.json"
    try JSONEncoder().encode(Configured(settings)).write(to: URL(fileURLWithPath: path))
    return path
}

@discardableResult
func runFallguard(_ arguments: [String], killAfter: Double? = nil, killWhen: (() -> Bool)? = nil) throws -> (status: Int32, output: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: fallguardBinary)
    p.arguments = arguments
    let out = temporaryFolder() + "/out.txt"
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    p.standardOutput = FileHandle(forWritingAtPath: out)
    p.standardError = FileHandle(forWritingAtPath: out)
    try p.run()
    if let killWhen {
        _ = eventually(60, killWhen)
    }
    if let killAfter {
        usleep(UInt32(killAfter * 1_000_000))
    }
    if killAfter != nil || killWhen != nil { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    return (p.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
}

@Suite(.serialized) struct CrashTests {
    @Test func killedTwiceWhileTheReceiverIsDownEveryAlertArrivesOncePerKey() throws {
        // Find a port, then take the receiver down: the bridge sees connection refused.
        let receiver = try Receiver()
        let port = receiver.port
        receiver.stop()
        var settings = testSettings(receiver, contacts: [anna, ben])
        settings.policy.retry = RetrySettings(initial: 0.05, max: 0.3)
        let folder = temporaryFolder()
        let json = try writeSettings(settings, to: folder)
        let keysLog = folder + "/keys.txt"
        let common = ["outbox-run", "--settings-json", json, "--state-dir", folder + "/state"]
        func logged() -> Int { ((try? String(contentsOfFile: keysLog, encoding: .utf8)) ?? "").split(separator: "\n").count }
        // Killed once every alert is committed, while it retries against the dead receiver.
        let first = try runFallguard(common + ["--enqueue", "20", "--enqueue-log", keysLog], killAfter: 0.5, killWhen: { logged() == 80 })
        #expect(first.status == SIGKILL, "\(first.output)")
        let second = try runFallguard(common, killAfter: 1.5)
        #expect(second.status == SIGKILL, "\(second.output)")
        try receiver.start(port: port, ["--hmac-secret", "s3cret"])
        let last = try runFallguard(common)
        #expect(last.status == 0, "\(last.output)")
        #expect(last.output.contains("pending 0") && last.output.contains("failed 0"), "\(last.output)")

        let enqueued = try String(contentsOfFile: keysLog, encoding: .utf8).split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        #expect(enqueued.count == 20 * 4)
        let delivered = receiver.requests.filter { $0.status < 300 }
        var keys = delivered.compactMap { $0.header("Idempotency-Key") }
        keys += delivered.compactMap { $0.header("I-Twilio-Idempotency-Token") }
        #expect(Set(keys) == Set(enqueued))
        #expect(delivered.filter { $0.path == "/hook" }.allSatisfy { $0.signature_ok == true })
    }

    @Test func testAlertPrintsEachChannelsResult() throws {
        let receiver = try Receiver(["--hmac-secret", "s3cret", "--reject-to", ben.phone!])
        var settings = testSettings(receiver)
        settings.channels["run"] = ExecOptions(command: ["/bin/cat"])
        let json = try writeSettings(settings, to: temporaryFolder())
        let all = try runFallguard(["test-alert", "--settings-json", json])
        #expect(all.status == 0, "\(all.output)")
        for line in ["call to Anna: sent (CA", "sms to Anna: sent (SM", "hook: sent", "run: sent"] {
            #expect(all.output.contains(line), "\(line) in \(all.output)")
        }
        #expect(receiver.requests.allSatisfy { $0.body.contains("TEST") })
        let one = try runFallguard(["test-alert", "--settings-json", json, "--channel", "sms", "--all-contacts"])
        #expect(one.status == 1 && one.output.contains("sms to Ben: FAILED (permanent failure") && one.output.contains("sms to Cara: sent"), "\(one.output)")
    }

    @Test func configurationProblemsExit78NamingEveryKey() throws {
        let folder = temporaryFolder()
        let json = folder + "/bad.json"
        try """
            {"wearer": {"name": "M"}, "contacts": [{"name": "A", "phone": "0770"}],
             "channels": {"sms": {"type": "twilio-sms", "account-sid": "AC1", "from": "+15005550006"},
                          "call": {"type": "webhook", "url": "nope"}}}
            """.write(toFile: json, atomically: true, encoding: .utf8)
        let r = try runFallguard(["test-alert", "--settings-json", json])
        #expect(r.status == 78)
        for key in ["contacts.0.phone", "channels.sms.auth-token", "channels.call.url", "policy.fall.primary.1"] {
            #expect(r.output.contains(key), "\(key) in \(r.output)")
        }
    }
}
