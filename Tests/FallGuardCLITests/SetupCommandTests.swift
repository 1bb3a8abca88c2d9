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
        if channel == "ntfy" {   // ntfy's own channel (priority by severity), not a webhook
            #expect(text.contains("type: ntfy\n    server: \"https://ntfy.sh\"\n    topic: \"fallguard-0123456789abcdef\""), "\(text)")
        }
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

    /// Drives `fallguard setup` on a pseudo-terminal as a person would: each prompt (a line
    /// ending in ":") answered from `answers` as it appears (a list: one per asking), "did the
    /// test alert arrive?" yes only when the receiver has the SMS, "did you hear the buzzer?" yes
    /// only when the GPIO emulator's log shows it sounding; with the emulators (`spec`), "lie
    /// down" answered once the IIO emulator plays the lying part, and the button pressed
    /// (held 200 ms through the GPIO emulator) when setup says to press it and when the
    /// simulated fall is detected. argv: receiver log, spec (JSON), the command.
    static let driver = #"""
        import os, pty, sys, json, time, select, signal, subprocess
        log, spec, args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
        answers = spec["answers"]
        def emu_position():
            r = subprocess.run([spec["iio_ctl"], spec["iio_socket"], "status"], capture_output=True, text=True).stdout
            return float(next((w.split("=")[1] for w in r.split() if w.startswith("position_s=")), "0"))
        def press():
            subprocess.run([spec["gpio_ctl"], "-s", spec["gpio_socket"], "hold", spec.get("button", "GPIO17"), "200"])
        def sounded():
            if not os.path.exists(spec["gpio_log"]): return False
            lines = [json.loads(l) for l in open(spec["gpio_log"]) if l.strip()]
            return any(r.get("event") == "level" and r.get("offset") == 18 and r.get("value") == 1 for r in lines)
        pid, fd = pty.fork()
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.execv(args[0], args)
        out, pending, deadline, fired = b"", b"", time.time() + 240, set()
        while time.time() < deadline:
            r, _, _ = select.select([fd], [], [], 0.5)
            if not r: continue
            try: chunk = os.read(fd, 4096)
            except OSError: break
            if not chunk: break
            out += chunk; pending += chunk
            text = pending.decode(errors="replace")
            for trigger in spec.get("press_on", []):
                n = out.decode(errors="replace").count(trigger)
                if n > len([f for f in fired if f[0] == trigger]):
                    fired.add((trigger, n)); press()
            if not text.rstrip(" ").endswith(":"): continue
            if "Did the test alert arrive" in text:
                sent = any("/Messages.json" in json.loads(l).get("path", "") for l in open(log) if l.strip())
                reply = "yes" if sent else "no"
            elif "Did you hear the buzzer" in text:
                reply = "yes" if sounded() else "no"
            else:
                if "Now lie down" in text:
                    end = time.time() + 60
                    while emu_position() < spec["lying_from"] and time.time() < end: time.sleep(0.2)
                reply = next((a for p, a in answers if p in text), "")
                if isinstance(reply, list): reply = reply.pop(0) if len(reply) > 1 else reply[0]
            os.write(fd, (reply + "\n").encode()); pending = b""
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode(errors="replace"))
        sys.exit(os.waitstatus_to_exitcode(status))
        """#

    static func smsAnswers(_ base: String) -> [[Any]] {
        [["Who wears it", "Margaret"], ["Where do they live", "Flat 3"], ["How should FallGuard tell", "sms"],
         ["Who should be told first", "Anna"], ["Their mobile number", ["07700 900123", "+447700900123"]],
         ["Your Twilio number", "+15005550006"], ["Twilio account SID", twilioSID],
         ["Twilio auth token", twilioToken], ["Twilio API address", base]]
    }

    static func drive(_ dir: TempDirectory, _ receiver: Receiver, spec: [String: Any], _ command: [String]) throws -> CommandResult {
        let driver = dir.write("drive.py", Self.driver)
        let json = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
        return try runCommand("/usr/bin/python3", [driver, receiver.logPath, json] + command)
    }

    /// The phone number first without its country code; no hardware: the test alert only.
    @Test func interactiveRunOnATerminalReachesTestAlertReceived() throws {
        let receiver = try Receiver()
        let dir = TempDirectory("setup-pty")
        let config = dir.path + "/config.yaml", credentials = dir.path + "/credentials.yaml"
        let r = try Self.drive(dir, receiver, spec: ["answers": Self.smsAnswers(receiver.base)],
                               [fallguardBinary, "setup", "--config", config, "--credentials", credentials, "--no-hardware"])
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

    /// Every check on emulated hardware (the real libiio on the IIO emulator's ADXL345, the real
    /// libgpiod on the GPIO emulator): the sensor plays HAPT person 11's real standing (17 s)
    /// then lying (16 s), as a phone on the belt reads them; setup finds the orientation
    /// (`[[0, 1, 0], [-1, 0, 0], [0, 0, 1]]`, not the identity) and writes it; the buzzer sounds
    /// four times; the press is seen; the SMS arrives; the bundled fall is detected and the press
    /// stops its countdown, with nothing sent.
    @Test(.enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
    func everyCheckOnEmulatedHardware() throws {
        let receiver = try Receiver()
        let dir = TempDirectory("setup-checks")
        let config = dir.path + "/config.yaml", credentials = dir.path + "/credentials.yaml"
        // Standing (labelled 61.44–79.88 s) from 62 to 79 s, then lying (from 83.62 s) from 84 s.
        let rows = try String(contentsOfFile: dailyFixtureFolder + "/U11-exp2-55-100s.csv", encoding: .utf8)
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",").map { Double($0)! } }
        let kept = rows.filter { (62..<79).contains($0[0]) } + rows.filter { $0[0] >= 84 }
        let recording = dir.write("stand-then-lie.csv", "t_s,x_g,y_g,z_g\n" + kept.enumerated().map { i, r in
            String(format: "%.3f,%.4f,%.4f,%.4f", Double(i) / 50, r[1], r[2], r[3]) }.joined(separator: "\n") + "\n")
        let tools = Emulator.root + "/tools"
        let spec: [String: Any] = [
            "answers": Self.smsAnswers(receiver.base) + [["Sensor:", "adxl345"], ["Seconds to press", "10"]],
            "iio_ctl": tools + "/iio-emulator/iio-emu-ctl", "iio_socket": dir.path + "/iio.sock", "lying_from": 17.5,
            "gpio_ctl": tools + "/gpio-emulator/gpio-ctl", "gpio_socket": dir.path + "/gpio.sock",
            "gpio_log": dir.path + "/gpio.jsonl", "press_on": ["Press the abort button now", "FALL DETECTED"],
        ]
        let r = try Self.drive(dir, receiver, spec: spec, [
            tools + "/gpio-emulator/gpio-emu", "--control", dir.path + "/gpio.sock", "--log", dir.path + "/gpio.jsonl", "--",
            tools + "/iio-emulator/iio-emu", "--model", "adxl345-direct", "--recording", recording, "--control", dir.path + "/iio.sock", "--",
            fallguardBinary, "setup", "--config", config, "--credentials", credentials])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("sensor found: adxl345"), "\(r.stdout)")
        #expect(r.stdout.contains("orientation: mount-matrix [[0, 1, 0], [-1, 0, 0], [0, 0, 1]] written"), "\(r.stdout)")
        let text = try String(contentsOfFile: config, encoding: .utf8)
        #expect(text.contains("mount-matrix: [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]"), "\(text)")
        #expect(r.stdout.contains("buzzer heard."), "\(r.stdout)")
        let beeps = try String(contentsOfFile: dir.path + "/gpio.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "level" && $0["offset"] as? Int == 18 && $0["value"] as? Int == 1 }
        // Four beeps for the check; then the simulated fall's countdown, stopped by the press.
        #expect(beeps.count > 4, "\(beeps.count)")
        #expect(r.stdout.contains("button pressed."), "\(r.stdout)")
        #expect(r.stdout.contains("test alert received."), "\(r.stdout)")
        #expect(r.stdout.contains("simulated fall aborted"), "\(r.stdout)")
        // The simulated fall sent nothing: the one SMS is the test alert's.
        #expect(receiver.requests.filter { $0.path.hasSuffix("/Messages.json") }.count == 1, "\(receiver.requests.map(\.path))")
        let check = try fallguard(["check-config", "--config", config, "--no-hardware"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    /// The simulated fall that nobody aborts fails the check (exit 1, saying so) after the
    /// buzzer's countdown ran out: --answers with `simulated-fall: aborted`, the real libgpiod on
    /// the GPIO emulator, the real libiio on the IIO emulator's ADXL345, nobody pressing.
    @Test(.enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
    func aSimulatedFallNobodyAbortsFailsTheCheck() throws {
        let dir = TempDirectory("setup-unaborted")
        let answers = dir.write("answers.yaml", Self.common.replacingOccurrences(of: "countdown: 30", with: "countdown: 5")
            + Self.channels["ntfy"]! + "simulated-fall: aborted\n")
        let run = try GPIOEmulatorRun(["setup", "--answers", answers, "--config", dir.path + "/config.yaml"],
                                      wrapper: [Emulator.root + "/tools/iio-emulator/iio-emu", "--model", "adxl345-direct",
                                                "--recording", Emulator.fixtures + "/D01_SA08_R01.csv", "--"])
        let status = run.wait()
        #expect(status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("FALL DETECTED"), "\(run.stdout)")
        #expect(run.stderr.contains("the countdown was not stopped"), "\(run.stderr)")
        #expect(try run.levels(offset: 18).contains { $0.value == 1 }, "the countdown sounded")
    }

    /// --answers: the checks' recorded answers. The orientation's result goes into the file,
    /// a skipped check says so, a wrong recorded answer names the file, line and key.
    @Test func answersRecordTheChecks() throws {
        let dir = TempDirectory("setup-recorded")
        let config = dir.path + "/config.yaml"
        let answers = dir.write("answers.yaml", Self.common + Self.channels["ntfy"]! + """
            mount-matrix: [[1, 0, 0], [0, 0, -1], [0, 1, 0]]
            buzzer-heard: skip
            test-alert-received: skip

            """)
        let r = try fallguard(["setup", "--answers", answers, "--config", config, "--no-hardware"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(try String(contentsOfFile: config, encoding: .utf8).contains("mount-matrix: [[1, 0, 0], [0, 0, -1], [0, 1, 0]]"))
        #expect(r.stdout.contains("5. The test alert: skipped"), "\(r.stdout)")
        let check = try fallguard(["check-config", "--config", config, "--no-hardware"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let bad = dir.write("bad.yaml", Self.common + Self.channels["ntfy"]! + "buzzer-heard: maybe\n")
        let b = try fallguard(["setup", "--answers", bad, "--config", config, "--no-hardware"])
        #expect(b.status == 78 && b.stderr.contains("bad.yaml:\(Self.common.split(separator: "\n").count + 3): buzzer-heard: 'maybe': one of yes, no, skip"), "\(b.stderr)")
        let notRotation = dir.write("matrix.yaml", Self.common + Self.channels["ntfy"]! + "mount-matrix: [[2, 0, 0], [0, 1, 0], [0, 0, 1]]\n")
        let m = try fallguard(["setup", "--answers", notRotation, "--config", config, "--no-hardware"])
        #expect(m.status == 78 && m.stderr.contains("matrix.yaml: mount-matrix: three rows of three numbers, a rotation"), "\(m.stderr)")
    }
}
