import ArgumentParser
import FallGuardConfig
import FallGuardCore
import FallGuardDaemon
import FallGuardHardware
import Foundation

/// `fallguard setup`: the first run on the Pi (issue 39). Asks who wears it, whom to tell and
/// how (a channel without an account first), which sensor and pins; writes the configuration
/// and the credentials file (0600); then checks the file (`check-config`), looks for the
/// checks (SetupChecks): the sensor found and oriented, the buzzer heard, the button pressed, a
/// test alert received, a simulated fall aborted. `--answers FILE` takes the answers from a file
/// (a flat YAML mapping of the keys below), the checks' too (absent: skipped).
struct SetupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "First run: ask who wears it and whom to tell, write the configuration, check it, send a test alert.",
        discussion: """
            Interactive: every question shows its default in [brackets] (Enter takes it). With \
            --answers FILE the answers come from FILE, one `key: value` a line: \
            \(Question.all.map(\.key).joined(separator: ", ")); and the checks' recorded answers \
            (a check whose key is absent is skipped): \(SetupChecks.keys.map { "\($0.key) (\($0.values.joined(separator: "|")))" }.joined(separator: ", ")). \
            Writes --config (the previous \
            file is kept as <file>.before-setup) and, when a channel has a secret, --credentials \
            (mode 0600, owned by fallguard when that user exists). Then the checks, each skippable \
            (answer skip): the sensor found and oriented (stand still, then lie on the back: \
            sets or confirms sensor.mount-matrix), the buzzer heard, the button pressed within \
            20 s, a test alert received, a simulated fall (the bundled recording through the \
            alarm, nothing sent) aborted with the button. A running fallguard.service is stopped \
            for the checks and started again. Exit status 78 when an answer \
            is invalid or the written file does not pass check-config; 1 when a check failed \
            (the test alert not sent or not received, the buzzer not heard, no press, the \
            countdown not aborted).
            """)

    @Option(help: ArgumentHelp("The configuration file to write.", valueName: "path"))
    var config = "/etc/fallguard/config.yaml"

    @Option(help: ArgumentHelp("The credentials file to write (secrets only).", valueName: "path"))
    var credentials = "/etc/fallguard/credentials.yaml"

    @Option(help: ArgumentHelp("Take the answers from this file instead of asking (the checks' too).", valueName: "path"))
    var answers: String?

    @Flag(help: "Do not open the sensor or the GPIO lines (setting up on another machine).")
    var noHardware = false

    func run() throws {
        var given: [String: String] = [:]
        if let answers { given = try Self.readAnswers(answers) }
        let interactive = answers == nil
        if interactive {
            print("FallGuard setup. Enter takes the [default]; Ctrl-C stops: before the questions end nothing is written, during the checks the service is started again.\n")
        }
        var a: [String: String] = [:]
        for q in Question.all where q.asked(a) {
            var value: String
            if interactive {
                // On a terminal a wrong answer is asked again, saying what is wanted.
                let suggested = q.defaultValue(a)
                value = try Self.askOrStop(q, default: suggested)
                while let problem = q.problem(value, a) {
                    print("  \(problem)")
                    value = try Self.askOrStop(q, default: suggested)
                }
            } else {
                value = given[q.key] ?? q.defaultValue(a) ?? ""
                if let problem = q.problem(value, a) { throw Self.fail("\(answers!): \(q.key): \(problem)") }
            }
            a[q.key] = value
        }
        // The orientation's recorded result (interactive: the check measures it).
        if let m = given["mount-matrix"], m != "null" {
            guard Self.matrix(m) != nil else { throw Self.fail("\(answers!): mount-matrix: three rows of three numbers, a rotation, e.g. [[1, 0, 0], [0, 0, -1], [0, 1, 0]]") }
            a["mount-matrix"] = m
        }
        let credentialsPath = URL(fileURLWithPath: credentials).standardizedFileURL.path
        try writeFiles(a, credentialsPath: credentialsPath, quiet: false)

        print("\n1. Checking the configuration (fallguard check-config) ...")
        try checkConfig()
        var checks = SetupChecks(config: config, answers: a, recorded: interactive ? nil : given, noHardware: noHardware) { changed in
            try writeFiles(changed, credentialsPath: credentialsPath, quiet: true)
            try checkConfig()
        }
        let service = ServicePause()
        defer { service.restart() }
        if !noHardware {
            service.stopForChecks()
            try checks.sensor()
            try checks.buzzer()
            try checks.button()
        }
        try testAlert(channel: Channel(a["channel"] ?? ""), checks: checks)
        if !noHardware { try checks.simulatedFall() }
        print("""

            Done. \(service.stopped ? "" : "Start (or restart) the service: sudo systemctl restart fallguard\n")\
            Then try the whole chain once for real (docs/raspberry-pi.md, step 10): drop the sensor onto a \
            cushion, hear the buzzer's countdown and press the button to abort it; then let one \
            countdown run out; then hold the button 2 s for a help request.
            """)
    }

    private func writeFiles(_ a: [String: String], credentialsPath: String, quiet: Bool) throws {
        let written = SetupFiles(answers: a, credentialsPath: credentialsPath)
        try Self.write(written.config, to: config, mode: 0o640, owner: nil, keepPrevious: !quiet)
        if let secrets = written.credentials {
            try Self.write(secrets, to: credentials, mode: 0o600, owner: "fallguard", keepPrevious: false)
            if !quiet { print("wrote \(credentials) (the secrets, mode 0600)") }
        }
        if !quiet { print("wrote \(config)") }
    }

    private func checkConfig() throws {
        let check = Self.runSelf(["check-config", "--config", config] + (noHardware ? ["--no-hardware"] : []))
        print(check.output, terminator: "")
        guard check.status == 0 else { throw Self.fail("the written configuration does not pass check-config (above)") }
    }

    /// 5. A test alert, sent and received.
    private func testAlert(channel: Channel, checks: SetupChecks) throws {
        if !checks.interactive, SetupChecks.says(checks.recorded?["test-alert-received"] ?? "skip", "skip") {
            print("\n5. The test alert: skipped")
            return
        }
        print("\n5. Sending a test alert (fallguard test-alert) ...")
        flushStandardOutput()
        let alert = Self.runSelf(["test-alert", "--config", config])
        print(alert.output, terminator: "")
        guard alert.status == 0 else {
            throw Self.fail("the test alert could not be sent (above): correct the answer and run `fallguard setup` again, or edit \(config)", status: 1)
        }
        let arrived = try checks.answer("test-alert-received", "Did the test alert arrive (\(channel.whereToLook))? yes/no (skip)", suggested: "")
        if arrived == "skip" { print("test alert: not confirmed (skipped)"); return }
        guard SetupChecks.says(arrived, "y", "yes") else {
            throw Self.fail("the test alert did not arrive: \(channel.ifNotArrived)", status: 1)
        }
        print("test alert received.")
    }

    /// A mount matrix as the answers file or the orientation check writes it: three rows of
    /// three numbers, a rotation (determinant ±1).
    static func matrix(_ text: String) -> [[Double]]? {
        guard let rows = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[NSNumber]],
              rows.count == 3, rows.allSatisfy({ $0.count == 3 }) else { return nil }
        let m = rows.map { $0.map(\.doubleValue) }
        // A rotation's entries lie within ±1: a determinant near 1 from huge and tiny entries is not one.
        guard m.joined().allSatisfy({ abs($0) <= 1.05 }) else { return nil }
        return abs(abs(MountOrientation.determinant(m)) - 1) <= 0.05 ? m : nil
    }

    // MARK: - Reading answers

    /// `ask`, but the end of the input stops the setup (nothing written).
    static func askOrStop(_ q: Question, default d: String?) throws -> String {
        guard let v = ask(q, default: d, atEnd: nil) else { throw fail("\n\(q.key): no answer (end of input): nothing written") }
        return v
    }

    static func ask(_ q: Question, default d: String?, atEnd: String?) -> String? {
        print(q.prompt + (d.map { $0.isEmpty ? " []" : " [\($0)]" } ?? "") + ": ", terminator: "")
        flushStandardOutput()
        guard let line = readLine() else { return atEnd }
        let t = line.trimmingCharacters(in: .whitespaces)
        return t.isEmpty ? (d ?? "") : t
    }

    /// A flat YAML mapping: `key: value` lines, `#` comments, values optionally quoted.
    static func readAnswers(_ path: String) throws -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw fail("\(path): cannot read the answers file")
        }
        var result: [String: String] = [:]
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else { throw fail("\(path):\(n + 1): expected `key: value`") }
            let key = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            var value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            if value.count >= 2, let f = value.first, f == value.last, f == "\"" || f == "'" {
                value = String(value.dropFirst().dropLast())
            }
            let known = Question.all.map(\.key) + SetupChecks.keys.map { $0.key }
            guard known.contains(key) else {
                throw fail("\(path):\(n + 1): \(key): unknown key (known: \(known.joined(separator: ", ")))")
            }
            if let allowed = SetupChecks.keys.first(where: { $0.key == key })?.values, key != "mount-matrix", !allowed.contains(value) {
                throw fail("\(path):\(n + 1): \(key): '\(value)': one of \(allowed.joined(separator: ", "))")
            }
            result[key] = value
        }
        return result
    }

    static func fail(_ message: String, status: Int32 = 78) -> ExitCode {
        flushStandardOutput()
        printError(message)
        return ExitCode(status)
    }

    // MARK: - Writing

    static func write(_ text: String, to path: String, mode: mode_t, owner: String?, keepPrevious: Bool) throws {
        let fm = FileManager.default
        try? fm.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if keepPrevious, fm.fileExists(atPath: path) {
            _ = try? fm.removeItem(atPath: path + ".before-setup")
            try? fm.copyItem(atPath: path, toPath: path + ".before-setup")
        }
        let temporary = path + ".setup-new"
        guard fm.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: Int(mode)]) else {
            throw fail("\(path): cannot write (run as root: sudo fallguard setup)", status: 73)
        }
        chmod(temporary, mode)
        if getuid() == 0, let group = getgrnam("fallguard") {
            // The service's user reads both: the configuration by group, the credentials as owner.
            let uid = owner.flatMap { getpwnam($0) }.map { $0.pointee.pw_uid } ?? 0
            chown(temporary, uid, group.pointee.gr_gid)
        }
        guard rename(temporary, path) == 0 else { throw fail("\(path): cannot replace: \(String(cString: strerror(errno)))", status: 73) }
    }

    /// A program's exit status (its output discarded).
    static func run(_ path: String, _ arguments: [String]) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return 127 }
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// This program again, its output (standard output and error) looked at as it comes: when
    /// `until` says true (given all the output so far, at least every 200 ms), or after
    /// `timeout` seconds, it is stopped (SIGTERM, then SIGKILL after 2 s).
    static func watchSelf(_ arguments: [String], timeout: Double, until: (String) -> Bool) -> (matched: Bool, status: Int32, output: String) {
        let (p, pipe, failed) = startSelf(arguments)
        if let failed { return (false, 127, failed) }
        let fd = pipe.fileHandleForReading.fileDescriptor
        var data = Data(), matched = false, open = true
        let end = MonotonicClock.nanoseconds() + Int64(timeout * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while MonotonicClock.nanoseconds() < end {
            if open {
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&pfd, 1, 200) > 0 {
                    let n = read(fd, &buffer, buffer.count)
                    if n > 0 { data.append(contentsOf: buffer[0..<n]) } else { open = false }
                }
            } else {
                usleep(200_000)
            }
            if until(String(decoding: data, as: UTF8.self)) { matched = true; break }
            if !open, !p.isRunning { break }
        }
        if p.isRunning {
            p.terminate()
            let grace = MonotonicClock.nanoseconds() + 2_000_000_000
            while p.isRunning, MonotonicClock.nanoseconds() < grace { usleep(20_000) }
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        }
        p.waitUntilExit()
        return (matched, p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// This program again, started with its standard output and error into one pipe; the
    /// reason when it could not start.
    private static func startSelf(_ arguments: [String]) -> (Process, Pipe, String?) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (p, pipe, "cannot run \(p.executableURL!.path): \(error)\n") }
        return (p, pipe, nil)
    }

    /// This program again, with other arguments: its output and exit status.
    static func runSelf(_ arguments: [String]) -> (status: Int32, output: String) {
        let (p, pipe, failed) = startSelf(arguments)
        if let failed { return (127, failed) }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// The ways to tell someone, the ones without an account first.
struct Channel {
    let kind: String
    init(_ kind: String) { self.kind = kind }
    static let kinds = ["ntfy", "webhook", "email", "mqtt", "sms"]
    var whereToLook: String {
        switch kind {
        case "ntfy": "in the ntfy app, subscribed to the topic"
        case "webhook": "at the webhook's receiver"
        case "email": "in the contact's inbox"
        case "mqtt": "in Home Assistant or on the broker"
        default: "as an SMS on the contact's phone"
        }
    }
    var ifNotArrived: String {
        switch kind {
        case "ntfy": "check the phone subscribed to exactly the same topic and server, and that notifications are on"
        case "email": "look in the spam folder; check the SMTP host, login and app password"
        case "sms": "check the Twilio console's message log and the number's country"
        default: "check the address and the receiver's log"
        }
    }
}

/// One question of the setup, with its key in an answers file.
struct Question: Sendable {
    let key: String
    let prompt: String
    var asked: @Sendable ([String: String]) -> Bool = { _ in true }
    var defaultValue: @Sendable ([String: String]) -> String? = { _ in nil }
    var problem: @Sendable (String, [String: String]) -> String? = { _, _ in nil }

    static func needed(_ v: String, _: [String: String]) -> String? { v.isEmpty ? "an answer is needed" : nil }
    static func when(_ kinds: String...) -> @Sendable ([String: String]) -> Bool { { kinds.contains($0["channel"] ?? "") } }
    static func fixed(_ v: String) -> @Sendable ([String: String]) -> String? { { _ in v } }
    static func phone(_ v: String, _: [String: String]) -> String? {
        v.range(of: #"^\+[1-9][0-9]{6,14}$"#, options: .regularExpression) == nil ? "a phone number in E.164: + and the country code, e.g. +447700900123" : nil
    }
    static func url(_ v: String, _: [String: String]) -> String? {
        guard let u = URL(string: v), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else { return "an http:// or https:// address" }
        return nil
    }
    static func line(_ v: String, _: [String: String]) -> String? {
        v.range(of: #"^GPIO[0-9]{1,2}$"#, options: .regularExpression) == nil ? "a BCM line name such as GPIO18" : nil
    }

    static let all: [Question] = [
        Question(key: "wearer-name", prompt: "Who wears it? (a first name: every message says it)", problem: needed),
        Question(key: "wearer-location", prompt: "Where do they live, and how does a helper get in? (only sent to contacts)", defaultValue: fixed("")),
        Question(key: "channel", prompt: "How should FallGuard tell someone? ntfy (a push message on a phone, no account), webhook, email (your mail account), mqtt (Home Assistant), sms (a PAID Twilio account)",
                 defaultValue: fixed("ntfy"), problem: { v, _ in Channel.kinds.contains(v) ? nil : "one of \(Channel.kinds.joined(separator: ", "))" }),
        Question(key: "ntfy-server", prompt: "ntfy server", asked: when("ntfy"), defaultValue: fixed("https://ntfy.sh"), problem: url),
        Question(key: "ntfy-topic", prompt: "ntfy topic (subscribe to it in the app; anyone who knows it can read it)", asked: when("ntfy"),
                 defaultValue: { _ in "fallguard-" + (0..<12).map { _ in String("0123456789abcdef".randomElement()!) }.joined() },
                 problem: { v, _ in v.range(of: #"^[A-Za-z0-9_-]{8,64}$"#, options: .regularExpression) == nil ? "8 to 64 letters, digits, - or _ (hard to guess)" : nil }),
        Question(key: "webhook-url", prompt: "Webhook address (POSTs a JSON message)", asked: when("webhook"), problem: url),
        Question(key: "contact-name", prompt: "Who should be told first? (a name)", asked: when("email", "sms"), problem: needed),
        Question(key: "contact-email", prompt: "Their e-mail address", asked: when("email"),
                 problem: { v, _ in v.contains("@") ? nil : "an e-mail address" }),
        Question(key: "contact-phone", prompt: "Their mobile number (+ and the country code)", asked: when("sms"), problem: phone),
        Question(key: "email-host", prompt: "Your mail provider's SMTP server", asked: when("email"), problem: needed),
        Question(key: "email-port", prompt: "SMTP port", asked: when("email"), defaultValue: fixed("587"),
                 problem: { v, _ in (Int(v).map { (1...65535).contains($0) } ?? false) ? nil : "a port number" }),
        Question(key: "email-security", prompt: "SMTP security: starttls, tls or none", asked: when("email"), defaultValue: fixed("starttls"),
                 problem: { v, _ in ["starttls", "tls", "none"].contains(v) ? nil : "starttls, tls or none" }),
        Question(key: "email-username", prompt: "SMTP login (the account's address)", asked: when("email"), problem: needed),
        Question(key: "email-password", prompt: "SMTP password (often an app password; stored in the credentials file, 0600)", asked: when("email"), problem: needed),
        Question(key: "mqtt-host", prompt: "MQTT broker (Home Assistant's)", asked: when("mqtt"), defaultValue: fixed("homeassistant.local"), problem: needed),
        Question(key: "mqtt-port", prompt: "MQTT port", asked: when("mqtt"), defaultValue: fixed("1883"),
                 problem: { v, _ in (Int(v).map { (1...65535).contains($0) } ?? false) ? nil : "a port number" }),
        Question(key: "mqtt-username", prompt: "MQTT login (empty: none)", asked: when("mqtt"), defaultValue: fixed("")),
        Question(key: "mqtt-password", prompt: "MQTT password (stored in the credentials file, 0600)", asked: { $0["channel"] == "mqtt" && !($0["mqtt-username"] ?? "").isEmpty }, problem: needed),
        Question(key: "twilio-from", prompt: "Your Twilio number (+ and the country code)", asked: when("sms"), problem: phone),
        Question(key: "twilio-account-sid", prompt: "Twilio account SID (AC...)", asked: when("sms"), problem: needed),
        Question(key: "twilio-auth-token", prompt: "Twilio auth token (stored in the credentials file, 0600)", asked: when("sms"), problem: needed),
        Question(key: "twilio-base-url", prompt: "Twilio API address", asked: when("sms"), defaultValue: fixed("https://api.twilio.com"), problem: url),
        Question(key: "sensor", prompt: "Sensor: auto, adxl345 or mpu6050", defaultValue: fixed("auto"),
                 problem: { v, _ in ["auto", "adxl345", "mpu6050"].contains(v) ? nil : "auto, adxl345 or mpu6050" }),
        Question(key: "buzzer", prompt: "Buzzer's GPIO line", defaultValue: fixed("GPIO18"), problem: line),
        Question(key: "button", prompt: "Abort button's GPIO line", defaultValue: fixed("GPIO17"), problem: line),
        Question(key: "led", prompt: "Status LED's GPIO line", defaultValue: fixed("GPIO27"), problem: line),
        Question(key: "countdown", prompt: "Seconds to press the button before the alert goes out", defaultValue: fixed("30"),
                 problem: { v, _ in (Int(v).map { (5...300).contains($0) } ?? false) ? nil : "a whole number of seconds, 5 to 300" }),
    ]
}

/// The files the answers make: the configuration and, for a channel with a secret, the credentials.
struct SetupFiles {
    let config: String
    let credentials: String?

    init(answers a: [String: String], credentialsPath: String) {
        func q(_ s: String) -> String {   // a YAML double-quoted scalar (JSON's string syntax)
            String(decoding: (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8), as: UTF8.self)
                .replacingOccurrences(of: "\\/", with: "/")
        }
        let channel = a["channel"] ?? "ntfy"
        var secrets: [String] = []
        var c = """
            # Written by `fallguard setup`; edit freely, then: sudo fallguard check-config
            # Every key, with its default and meaning: /usr/share/doc/fallguard/fallguard.example.yaml

            """
        var channels: String
        let name: String
        switch channel {
        case "ntfy":
            // ntfy's own channel: a fall is urgent (through do-not-disturb), a device problem high,
            // a recovered fall or the daily heartbeat default, not every message urgent.
            name = "phone"
            let server = (a["ntfy-server"] ?? "https://ntfy.sh").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            channels = "  phone:\n    type: ntfy\n    server: \(q(server))\n    topic: \(q(a["ntfy-topic"] ?? ""))\n"
        case "webhook":
            name = "hook"
            channels = "  hook:\n    type: webhook\n    url: \(q(a["webhook-url"] ?? ""))\n"
        case "email":
            name = "mail"
            channels = "  mail:\n    type: email\n    host: \(q(a["email-host"] ?? ""))\n    port: \(a["email-port"] ?? "587")\n    security: \(a["email-security"] ?? "starttls")\n    username: \(q(a["email-username"] ?? ""))\n    from: \(q(a["email-username"] ?? ""))\n"
            secrets.append("  mail:\n    password: \(q(a["email-password"] ?? ""))\n")
        case "mqtt":
            name = "home"
            channels = "  home:\n    type: mqtt\n    host: \(q(a["mqtt-host"] ?? ""))\n    port: \(a["mqtt-port"] ?? "1883")\n"
            // Acknowledgements from Home Assistant prove this secret (made here, 128 bits): without
            // it anyone who can publish to the broker could silence an alarm.
            let ackSecret = (0..<32).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
            var secret = "  home:\n    acknowledge-secret: \(q(ackSecret))\n"
            if let user = a["mqtt-username"], !user.isEmpty {
                channels += "    username: \(q(user))\n    allow-plaintext: true\n"
                secret += "    password: \(q(a["mqtt-password"] ?? ""))\n"
            }
            secrets.append(secret)
        default:
            name = "sms"
            channels = "  sms:\n    type: twilio-sms\n    from: \(q(a["twilio-from"] ?? ""))\n    base-url: \(q(a["twilio-base-url"] ?? "https://api.twilio.com"))\n"
            secrets.append("  sms:\n    account-sid: \(q(a["twilio-account-sid"] ?? ""))\n    auth-token: \(q(a["twilio-auth-token"] ?? ""))\n")
        }
        if !secrets.isEmpty { c += "credentials-file: \(q(credentialsPath))\n\n" }
        let device = a["sensor"].flatMap { $0 == "auto" ? nil : $0 }
        // A countdown shorter than the default final phase (its faster beeping) is all final phase.
        let seconds = Double(a["countdown"] ?? "30") ?? 30
        let finalPhase = seconds < AlarmSection.defaults.finalPhase ? "\n  final-phase: \(a["countdown"] ?? "30")" : ""
        c += """
            sensor:
              uri: "local:"
              device: \(device.map(q) ?? "null")
              mount-matrix: \(a["mount-matrix"] ?? "null")

            gpio:
              chip: gpiochip0
              buzzer: {line: \(a["buzzer"] ?? "GPIO18"), type: active}
              button: {line: \(a["button"] ?? "GPIO17"), bias: pull-up, active-low: true}
              led: {line: \(a["led"] ?? "GPIO27")}

            alarm:
              countdown: \(a["countdown"] ?? "30")\(finalPhase)

            wearer:
              name: \(q(a["wearer-name"] ?? ""))

            """
        if let location = a["wearer-location"], !location.isEmpty { c += "  location: \(q(location))\n" }
        if let contact = a["contact-name"], !contact.isEmpty {
            c += "\ncontacts:\n  - name: \(q(contact))\n"
            if let e = a["contact-email"], !e.isEmpty { c += "    email: \(q(e))\n" }
            if let p = a["contact-phone"], !p.isEmpty { c += "    phone: \(q(p))\n" }
        }
        c += "\nchannels:\n" + channels + "\npolicy:\n"
        // Broadcast channels tell everyone who follows them; contact channels go to the primary
        // contact first, then the others.
        let direct = channel == "email" || channel == "sms"
        for (kind, others) in [("fall", true), ("help-requested", true), ("resolved", true), ("device-problem", false), ("heartbeat", false)] {
            c += direct
                ? "  \(kind): {primary: [\(name)], others: [\(others ? name : "")], broadcast: []}\n"
                : "  \(kind): {primary: [], others: [], broadcast: [\(name)]}\n"
        }
        config = c
        credentials = secrets.isEmpty ? nil : "# Written by `fallguard setup`: the secrets of \(credentialsPath == "" ? "the configuration" : "the channels"), mode 0600.\nchannels:\n" + secrets.joined()
    }
}
