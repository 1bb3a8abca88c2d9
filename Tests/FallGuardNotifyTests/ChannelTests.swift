import AsyncHTTPClient
import Crypto
import FallGuardCore
import Foundation
import Testing
@testable import FallGuardNotify
import FallGuardTestSupport

@Suite struct TwilioChannelTests {
    @Test func anSMSIsATwilioMessagesRequest() async throws {
        let receiver = try Receiver()
        let receipt = try await withHTTPClient { client in
            try await TwilioChannel(name: "sms", account: twilioAccount(receiver), mode: .sms, client: client)
                .send(delivery(channel: "sms", to: anna))
        }
        let r = try #require(receiver.requests.first)
        #expect(r.path == "/2010-04-01/Accounts/\(twilioSID)/Messages.json")
        #expect(r.auth_ok == true && r.status == 201)
        #expect(r.form == ["To": "+447700900001", "From": "+15005550006",
                           "Body": "FALL ALERT: Margaret may have fallen & needs help <now>."])
        #expect(r.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(receipt.providerID?.hasPrefix("SM") == true)
    }

    @Test func aCallSpeaksTheMessageRepeatedInInlineTwiML() async throws {
        let receiver = try Receiver()
        let receipt = try await withHTTPClient { client in
            try await TwilioChannel(name: "call", account: twilioAccount(receiver), mode: .call(repeatCount: 3, language: "en-GB", machineDetection: true), client: client)
                .send(delivery(channel: "call", to: ben))
        }
        let r = try #require(receiver.requests.first)
        #expect(r.path.hasSuffix("/Calls.json") && r.auth_ok == true)
        let twiml = try #require(r.form?["Twiml"])
        #expect(r.form?["To"] == "+447700900002")
        #expect(r.form?["MachineDetection"] == "Enable", "a voicemail must not count as a person reached")
        #expect(twiml.hasPrefix("<Response><Say language=\"en-GB\">") && twiml.hasSuffix("</Say></Response>"))
        #expect(twiml.components(separatedBy: "<Say").count - 1 == 3)
        #expect(twiml.contains("fallen &amp; needs help &lt;now&gt;."))
        #expect(receipt.providerID?.hasPrefix("CA") == true)
    }

    @Test func failuresAreClassified() async throws {
        let receiver = try Receiver(["--reject-to", "+447700900002"])
        let flaky = try Receiver(["--fail-first", "1"])
        let down = try Receiver()
        down.stop()
        try await withHTTPClient { client in
            func failure(_ account: TwilioAccount, _ to: Recipient) async -> DeliveryFailure? {
                do {
                    _ = try await TwilioChannel(name: "sms", account: account, mode: .sms, client: client).send(delivery(channel: "sms", to: to))
                    return nil
                } catch { return error as? DeliveryFailure }
            }
            guard case .permanent(let why)? = await failure(twilioAccount(receiver, token: "wrong"), anna) else { Issue.record("401"); return }
            #expect(why.contains("401"))
            guard case .permanent(let bad)? = await failure(twilioAccount(receiver), ben) else { Issue.record("400"); return }
            #expect(bad.contains("21211"))
            guard case .transient(let busy)? = await failure(twilioAccount(flaky), anna) else { Issue.record("503"); return }
            #expect(busy.contains("503"))
            guard case .transient? = await failure(twilioAccount(down), anna) else { Issue.record("refused"); return }
            #expect(await failure(twilioAccount(flaky), anna) == nil)
        }
    }
}

@Suite struct WebhookChannelTests {
    @Test func theReceiverVerifiesTheSignature() async throws {
        let receiver = try Receiver(["--hmac-secret", "s3cret"])
        let options = WebhookOptions(url: receiver.base + "/api/webhook/fallguard", secret: "s3cret",
                                     headers: ["Authorization": "Bearer abc", "X-Extra": "1"])
        let d = delivery(channel: "hook", to: nil, key: "FG-1.fall.abc.b.hook")
        _ = try await withHTTPClient { try await WebhookChannel(name: "hook", options: options, client: $0).send(d) }
        let r = try #require(receiver.requests.first)
        #expect(r.signature_ok == true && r.status == 200 && r.path == "/api/webhook/fallguard")
        #expect(r.header("Idempotency-Key") == "FG-1.fall.abc.b.hook")
        #expect(r.header("Authorization") == "Bearer abc" && r.header("X-Extra") == "1")
        let payload = try JSONDecoder().decode(AlertPayload.self, from: Data(r.body.utf8))
        #expect(payload == d.payload)
        // Our own check agrees with the receiver's (Python hmac).
        #expect(r.header("X-FallGuard-Signature") == WebhookChannel.signature(of: Data(r.body.utf8), secret: "s3cret"))
    }

    @Test func aWrongSecretIsRejectedForGood() async throws {
        let receiver = try Receiver(["--hmac-secret", "s3cret"])
        let options = WebhookOptions(url: receiver.base + "/hook", secret: "other")
        await #expect(throws: DeliveryFailure.self) {
            _ = try await withHTTPClient { try await WebhookChannel(name: "hook", options: options, client: $0).send(delivery(channel: "hook", to: nil)) }
        }
        #expect(receiver.requests.first?.signature_ok == false)
    }

    @Test func ntfyStyleTextBody() async throws {
        let receiver = try Receiver()
        let options = WebhookOptions(url: receiver.base + "/fallguard-margaret", headers: ["Priority": "urgent"], body: .text)
        _ = try await withHTTPClient { try await WebhookChannel(name: "ntfy", options: options, client: $0).send(delivery(channel: "ntfy", to: nil)) }
        let r = try #require(receiver.requests.first)
        #expect(r.body == "FALL ALERT: Margaret may have fallen & needs help <now>.")
        #expect(r.header("Title") == "Fall alert: Margaret" && r.header("Priority") == "urgent")
        #expect(r.header("X-FallGuard-Signature") == nil)
    }
}

@Suite struct ExecChannelTests {
    func script(_ body: String) throws -> String {
        let path = temporaryFolder() + "/notify.sh"
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    @Test func theCommandReadsThePayloadOnStdin() async throws {
        let out = temporaryFolder() + "/payload.json"
        let path = try script("cat > \"$1\"")
        let d = delivery(channel: "run", to: nil)
        _ = try await ExecChannel(name: "run", options: ExecOptions(command: [path, out])).send(d)
        let payload = try JSONDecoder().decode(AlertPayload.self, from: Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(payload == d.payload)
    }

    @Test func exitStatusesAndTimeoutsAreFailures() async throws {
        func failure(_ body: String, timeout: Double = 10) async throws -> DeliveryFailure? {
            do {
                _ = try await ExecChannel(name: "run", options: ExecOptions(command: [try script(body)], timeout: timeout)).send(delivery(channel: "run", to: nil))
                return nil
            } catch { return error as? DeliveryFailure }
        }
        guard case .transient(let why)? = try await failure("echo 'modem busy' >&2; exit 1") else { Issue.record("exit 1"); return }
        #expect(why.contains("status 1") && why.contains("modem busy"))
        // A pager that is busy once (EX_UNAVAILABLE, EX_TEMPFAIL, even EX_CONFIG) is tried again.
        for code in [69, 75, 78] {
            guard case .transient? = try await failure("exit \(code)") else { Issue.record("exit \(code)"); return }
        }
        guard case .permanent? = try await failure("exit 127") else { Issue.record("exit 127"); return }
        guard case .transient(let slow)? = try await failure("sleep 30", timeout: 0.3) else { Issue.record("timeout"); return }
        #expect(slow.contains("timeout"))
        // A command that ignores its input and succeeds is delivered.
        #expect(try await failure("exit 0") == nil)
    }

    /// The timeout kills what the command started too, even a child that keeps standard error
    /// open, and the attempt ends on time.
    @Test func theTimeoutKillsTheCommandsChildren() async throws {
        let marker = temporaryFolder() + "/child.pid"
        let path = try script("sleep 60 & echo $! > \(marker); wait")
        let start = ContinuousClock.now
        do {
            _ = try await ExecChannel(name: "run", options: ExecOptions(command: [path], timeout: 1)).send(delivery(channel: "run", to: nil))
            Issue.record("a command past its timeout was delivered")
        } catch let failure as DeliveryFailure {
            guard case .transient = failure else { Issue.record("\(failure)"); return }
        }
        #expect(ContinuousClock.now - start < .seconds(5), "the attempt ends soon after the timeout")
        let child = try #require(Int32(try String(contentsOfFile: marker, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await until(3) { kill(child, 0) != 0 }, "the command's background child was killed")
    }

    /// A command that exits while a background child keeps standard error open never holds the
    /// attempt past its timeout (it used to hang until the child ended), and the child is gone.
    @Test func aChildHoldingStandardErrorDoesNotHoldTheAttempt() async throws {
        let marker = temporaryFolder() + "/child.pid"
        let path = try script("sleep 30 >&2 & echo $! > \(marker); exit 0")
        let start = ContinuousClock.now
        _ = try? await ExecChannel(name: "run", options: ExecOptions(command: [path], timeout: 2)).send(delivery(channel: "run", to: nil))
        #expect(ContinuousClock.now - start < .seconds(6), "the attempt ends by its timeout")
        let child = try #require(Int32(try String(contentsOfFile: marker, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await until(3) { kill(child, 0) != 0 }, "the background child was killed with the group")
    }

    /// The command never sees the bridge's environment (credentials given as `${ENV}` live there).
    @Test func theCommandGetsAMinimalEnvironment() async throws {
        setenv("FALLGUARD_TEST_SECRET", "s3cret-token", 1)
        defer { unsetenv("FALLGUARD_TEST_SECRET") }
        let out = temporaryFolder() + "/env.txt"
        let path = try script("env > \"$1\"")
        _ = try await ExecChannel(name: "run", options: ExecOptions(command: [path, out])).send(delivery(channel: "run", to: nil))
        let env = try String(contentsOfFile: out, encoding: .utf8)
        #expect(!env.contains("s3cret-token") && env.contains("PATH="), "\(env)")
    }
}
