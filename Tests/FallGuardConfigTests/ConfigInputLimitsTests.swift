import FallGuardConfig
import Foundation
import Testing
import FallGuardTestSupport

/// A whole configuration with working Twilio channels, to which a test adds what it checks.
private let base = """
    wearer: {name: Margaret}
    contacts:
      - {name: Anna, phone: "+447700900001", email: anna@example.org}
    channels:
      sms: {type: twilio-sms, account-sid: AC1, auth-token: twilio-token-1, from: "+15005550006"}
      call: {type: twilio-call, account-sid: AC1, auth-token: twilio-token-1, from: "+15005550006"}

    """

/// The diagnostics of `yaml` loaded as `fallguard run` loads it, as printed (`config.yaml:LINE:
/// key: message`, warnings with `warning:`).
private func check(_ yaml: String, environment: [String: String] = [:]) -> [String] {
    let dir = TempDirectory()
    let file = dir.write("config.yaml", yaml, mode: 0o600)
    let (_, diagnostics) = DaemonConfiguration.load(path: file, environment: environment)
    return diagnostics.map { $0.description.replacingOccurrences(of: dir.path + "/", with: "") }
}

/// Issue 14: every value from the file is checked where it enters, with FILE:LINE and its key;
/// what passes the check can be sent.
@Suite("Configuration input limits")
struct ConfigInputLimitsTests {
    /// `policy.retry.initial` above a day made `initial...86_400` a reversed range: a trap.
    @Test func aRetryLongerThanADayIsAProblemNotATrap() {
        let lines = check(base + "policy:\n  retry: {initial: 90000, max: 60}\n")
        #expect(lines.contains { $0.hasPrefix("config.yaml:8: policy.retry.initial: 90000.0 s is outside") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:8: policy.retry.max: 60.0 s is shorter than initial") }, "\(lines)")
        #expect(check(base + "policy:\n  retry: {initial: .nan, max: .inf}\n").filter { $0.contains("policy.retry") }.count == 2)
    }

    /// A billion laughs: nine levels of ten aliases is 10⁹ values; refused before anything walks it.
    @Test(.timeLimit(.minutes(1))) func anAliasBombIsRefused() {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for i in 1...9 { yaml += "a\(i): &a\(i) [" + Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ") + "]\n" }
        let lines = check(yaml)
        #expect(lines == ["config.yaml: aliases expand the file to more than 100000 values: not a configuration"])
    }

    @Test func aFileOverOneMebibyteOrNotAFileIsRefused() throws {
        let dir = TempDirectory()
        let big = dir.write("big.yaml", "# " + String(repeating: "x", count: 1 << 20) + "\n")
        #expect(DaemonConfiguration.load(path: big).1.map(\.description).first?.contains("larger than 1024 KiB") == true)
        #expect(mkfifo(dir.path + "/fifo.yaml", 0o600) == 0)
        #expect(DaemonConfiguration.load(path: dir.path + "/fifo.yaml").1.map(\.description).first?.contains("not a regular file") == true)
    }

    /// Issue 17: the recording's budget, flush interval and incident window, each with its line.
    @Test func recordingValuesOutOfRangeAreNamedWithTheirLines() {
        let lines = check(base + "recording:\n  keep-gb: 0\n  flush-interval: 30\n  incident-before: 1\n  incident-after: .nan\n  directory: rec\n")
        #expect(lines.contains { $0.hasPrefix("config.yaml:8: recording.keep-gb: 0.0 GB is outside 0.01...10000.0 GB") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:9: recording.flush-interval: 30.0 s is outside 1.0...10.0 s") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:10: recording.incident-before: 1.0 s is outside 5.0...600.0 s") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:11: recording.incident-after: nan s is outside 5.0...600.0 s") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:12: recording.directory: must be an absolute path") }, "\(lines)")
        let elsewhere = check(base + "recording: {enabled: true, directory: /srv/recordings}\n")
        #expect(elsewhere.contains { $0.contains("warning") && $0.contains("recording.directory") && $0.contains("ReadWritePaths=") }, "\(elsewhere)")
        #expect(check(base + "recording: {enabled: true, keep-gb: 8}\n").isEmpty)
    }

    @Test func aFallRouteWithoutChannelsIsAProblem() {
        let lines = check(base + "policy:\n  fall: {primary: [], others: [], broadcast: []}\n")
        #expect(lines.contains { $0.hasPrefix("config.yaml:8: policy.fall: lists no channel") }, "\(lines)")
        #expect(!check(base + "policy:\n  heartbeat: {primary: [], others: [], broadcast: []}\n").contains { $0.contains("lists no channel") })
    }

    @Test func controlCharactersInNamesAndHeadersAreProblems() {
        let lines = check("""
            device: "pi\\r\\nBcc: x"
            wearer: {name: "Marg\\u0007aret"}
            contacts:
              - {name: "Anna\\nX-Injected: 1", phone: "+447700900001"}
            channels:
              sms: {type: twilio-sms, account-sid: AC1, auth-token: twilio-token-1, from: "+15005550006"}
              call: {type: twilio-call, account-sid: AC1, auth-token: twilio-token-1, from: "+15005550006"}
              hook: {type: webhook, url: "https://hooks.example/x", headers: {Priority: "urgent\\r\\nX-Evil: 1", Tab: "a\\tb"}}
            policy:
              fall: {broadcast: [hook]}
            """)
        for key in ["config.yaml:1: device", "config.yaml:2: wearer.name", "config.yaml:4: contacts.0.name",
                    "config.yaml:8: channels.hook.headers.Priority"] {
            #expect(lines.contains { $0.hasPrefix(key + ": contains the control character") }, "\(key) in \(lines)")
        }
        #expect(!lines.contains { $0.contains("headers.Tab") })
    }

    /// The check takes the address the e-mail channel takes; `anna@example.org,bob@x.org` passed
    /// the old check and was refused at send time.
    @Test func anEmailAddressTheSenderRefusesIsAProblem() {
        let yaml = base.replacingOccurrences(of: "anna@example.org", with: "\"anna@example.org,bob@example.org\"")
        #expect(check(yaml).contains { $0.hasPrefix("config.yaml:3: contacts.0.email: ") }, "\(check(yaml))")
    }

    @Test func plaintextCredentialsNeedAnExplicitOverride() {
        let http = base.replacingOccurrences(of: "from: \"+15005550006\"}", with: "from: \"+15005550006\", base-url: \"http://sms.lan\"}")
        #expect(check(http).contains { $0.hasPrefix("config.yaml:5: channels.sms.base-url: would send the auth token in clear text to sms.lan") },
                "\(check(http))")
        let allowed = check(http.replacingOccurrences(of: "base-url:", with: "allow-plaintext: true, base-url:"))
        #expect(allowed.contains { $0.hasPrefix("config.yaml:5: warning: channels.sms.base-url: the auth token in clear text") }, "\(allowed)")
        #expect(!allowed.contains { !$0.contains("warning:") })
        let loopback = http.replacingOccurrences(of: "http://sms.lan", with: "http://127.0.0.1:8080")
        #expect(check(loopback) == [])

        let mqtt = base + "  home: {type: mqtt, host: broker.lan, username: fg, password: pw}\npolicy:\n  fall: {broadcast: [home]}\n"
        #expect(check(mqtt).contains { $0.contains("channels.home.tls: would send the password in clear text to broker.lan") }, "\(check(mqtt))")
        let tls = mqtt.replacingOccurrences(of: "password: pw}", with: "password: pw, tls: true}")
        #expect(!check(tls).contains { $0.contains("clear text") })
        let overridden = mqtt.replacingOccurrences(of: "password: pw}", with: "password: pw, allow-plaintext: true}")
        #expect(check(overridden).contains { $0.contains("warning: channels.home.tls: the password in clear text") }, "\(check(overridden))")
    }

    /// An exec command is looked up on the PATH it runs with, not on the caller's; a secret in
    /// its arguments would be visible in ps.
    @Test func execCommandsResolveOnTheirOwnPathAndCarryNoSecrets() {
        let dir = TempDirectory()
        let tool = dir.write("page-nurse", "#!/bin/sh\n", mode: 0o755)
        let exec = base + "  pager: {type: exec, command: [page-nurse, \"--token=${PAGER_TOKEN}\"]}\npolicy:\n  fall: {broadcast: [pager]}\n"
        var lines = check(exec, environment: ["PATH": dir.path, "PAGER_TOKEN": "s3cret-token"])
        #expect(lines.contains { $0.hasPrefix("config.yaml:7: channels.pager.command.0: 'page-nurse' is not an executable file") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("config.yaml:7: channels.pager.command.1: a secret") }, "\(lines)")
        #expect(!lines.joined().contains("s3cret-token"))
        lines = check(exec.replacingOccurrences(of: "[page-nurse, \"--token=${PAGER_TOKEN}\"]", with: "[\(tool), --urgent]"))
        #expect(lines == [], "\(lines)")
    }
}
