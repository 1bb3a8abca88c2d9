import Foundation
import Testing
import FallGuardTestSupport

/// `fallguard setup` (issue 39): the file it writes from answers passes check-config, its
/// secrets go to a 0600 credentials file, a bad answer names the file, line and key; an
/// interactive run on a terminal reaches "test alert received" through the Twilio-compatible
/// test receiver.
@Suite struct SetupCommandTests {
    static let common = """
        wearer-name: Margaret
        wearer-location: "Flat 3, 12 Mill Lane; key safe by the door"
        sensor: adxl345
        buzzer: GPIO18
        button: GPIO17
        led: GPIO27
        countdown: 30

        """

    static let channels: [String: String] = [
        "ntfy": "channel: ntfy\nntfy-topic: fallguard-0123456789abcdef\n",
        "webhook": "channel: webhook\nwebhook-url: https://hooks.example.org/fall\n",
        "email": "channel: email\ncontact-name: Anna\ncontact-email: anna@example.org\nemail-host: smtp.example.org\nemail-username: fallguard@example.org\nemail-password: s3cret-app-password\n",
        "mqtt": "channel: mqtt\nmqtt-host: homeassistant.local\nmqtt-username: fallguard\nmqtt-password: s3cret-mqtt-password\n",
        "sms": "channel: sms\ncontact-name: Anna\ncontact-phone: \"+447700900123\"\ntwilio-from: \"+15005550006\"\ntwilio-account-sid: AC0123456789abcdef0123456789abcdef\ntwilio-auth-token: s3cret-token\n",
    ]

    @Test(arguments: ["ntfy", "webhook", "email", "mqtt", "sms"])
    func answersMakeAConfigurationThatCheckConfigPasses(_ channel: String) throws {
        let dir = TempDirectory("setup-\(channel)")
        let answers = dir.write("answers.yaml", Self.common + Self.channels[channel]!)
        let config = dir.path + "/config.yaml", credentials = dir.path + "/credentials.yaml"
        let r = try fallguard(["setup", "--answers", answers, "--config", config, "--credentials", credentials, "--no-hardware"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let check = try fallguard(["check-config", "--config", config, "--no-hardware"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(!(check.stdout + check.stderr).contains("nobody will be told"), "\(check.stdout)\(check.stderr)")
        let text = try String(contentsOfFile: config, encoding: .utf8)
        #expect(text.contains("name: \"Margaret\""))
        #expect(text.contains("device: \"adxl345\""))
        if channel == "ntfy" { #expect(text.contains("url: \"https://ntfy.sh/fallguard-0123456789abcdef\""), "\(text)") }
        #expect(!text.contains("s3cret"), "a secret in the configuration file: \(text)")
        let hasSecret = ["email", "mqtt", "sms"].contains(channel)
        #expect(FileManager.default.fileExists(atPath: credentials) == hasSecret)
        if hasSecret {
            let attributes = try FileManager.default.attributesOfItem(atPath: credentials)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(try String(contentsOfFile: credentials, encoding: .utf8).contains("s3cret"))
        }
    }

    @Test func aBadAnswerNamesTheFileLineAndKey() throws {
        let dir = TempDirectory("setup-bad")
        let config = dir.path + "/config.yaml"
        let phone = dir.write("phone.yaml", Self.common + Self.channels["sms"]!.replacingOccurrences(of: "+447700900123", with: "07700 900123"))
        let r = try fallguard(["setup", "--answers", phone, "--config", config, "--no-hardware"])
        #expect(r.status == 78)
        #expect(r.stderr.contains("phone.yaml: contact-phone: a phone number in E.164"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: config), "nothing is written for a bad answer")
        let unknown = dir.write("unknown.yaml", "wearer-name: Margaret\nchanel: ntfy\n")
        let u = try fallguard(["setup", "--answers", unknown, "--config", config, "--no-hardware"])
        #expect(u.status == 78)
        #expect(u.stderr.contains("unknown.yaml:2: chanel: unknown key"), "\(u.stderr)")
    }

    /// Driven on a pseudo-terminal as a person would: each prompt answered as it appears (the
    /// phone number first without its country code); the "did it arrive?" question answered
    /// yes only when the receiver has the SMS.
    @Test func interactiveRunOnATerminalReachesTestAlertReceived() throws {
        let receiver = try Receiver()
        let dir = TempDirectory("setup-pty")
        let config = dir.path + "/config.yaml", credentials = dir.path + "/credentials.yaml"
        let driver = dir.write("drive.py", """
            import os, pty, sys, json, time, select
            log, base, args = sys.argv[1], sys.argv[2], sys.argv[3:]
            answers = [("Who wears it", "Margaret"), ("Where do they live", "Flat 3"), ("How should FallGuard tell", "sms"),
                       ("Who should be told first", "Anna"), ("Their mobile number", ["07700 900123", "+447700900123"]),
                       ("Your Twilio number", "+15005550006"), ("Twilio account SID", "\(twilioSID)"),
                       ("Twilio auth token", "\(twilioToken)"), ("Twilio API address", base)]
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(args[0], args)
            out, pending, deadline = b"", b"", time.time() + 120
            while time.time() < deadline:
                r, _, _ = select.select([fd], [], [], 0.5)
                if not r: continue
                try: chunk = os.read(fd, 4096)
                except OSError: break
                if not chunk: break
                out += chunk; pending += chunk
                text = pending.decode(errors="replace")
                if not text.rstrip(" ").endswith(":"): continue
                if "Did the test alert arrive" in text:
                    sent = any("/Messages.json" in json.loads(l).get("path", "") for l in open(log) if l.strip())
                    reply = "yes" if sent else "no"
                else:
                    reply = next((a for p, a in answers if p in text), "")
                    if isinstance(reply, list): reply = reply.pop(0) if len(reply) > 1 else reply[0]
                os.write(fd, (reply + "\\n").encode()); pending = b""
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(out.decode(errors="replace"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """)
        let r = try runCommand("/usr/bin/python3", [driver, receiver.logPath, receiver.base, fallguardBinary,
                                                   "setup", "--config", config, "--credentials", credentials, "--no-hardware"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("test alert received."), "\(r.stdout)")
        // A wrong answer on a terminal is asked again, saying what is wanted.
        #expect(r.stdout.contains("a phone number in E.164"), "\(r.stdout)")
        let sms = receiver.requests.filter { $0.path.hasSuffix("/Messages.json") }
        #expect(sms.count == 1, "\(receiver.requests.map(\.path))")
        #expect(sms.first?.form?["To"] == "+447700900123")
        #expect(sms.first?.form?["Body"]?.uppercased().contains("TEST") == true, "\(sms.first?.form ?? [:])")
        #expect(sms.first?.auth_ok == true)
        let attributes = try FileManager.default.attributesOfItem(atPath: credentials)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }
}
