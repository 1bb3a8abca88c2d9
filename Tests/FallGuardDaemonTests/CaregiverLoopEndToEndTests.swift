import Foundation
import Testing
import FallGuardTestSupport

/// The caregiver loop of `fallguard run` as deployed: a replayed real fall, the buzzer and LED
/// through the real libgpiod in the GPIO emulator, SMS and calls through a Twilio-compatible
/// server on loopback (tools/notify-receiver) whose calls move through their statuses and whose
/// Messages list carries the contacts' replies. Anna's call rings out; Ben is told at once,
/// replies "OK"; everyone learns that Ben is handling it; the wearer hears the alert go out
/// and then that help is coming.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct CaregiverLoopEndToEndTests {
    static let anna = "+447700900001", ben = "+447700900002", cara = "+447700900003"

    func config(_ receiver: Receiver, state: String, lib: GPIOLib) throws -> String {
        let path = state + ".yaml"
        let account = "account-sid: \(twilioSID), auth-token: \(twilioToken), from: \"+15005550006\", base-url: \"\(receiver.base)\""
        try """
            sensor: {replay: "\(DaemonCrashDuringCountdownTests.fixture)"}
            gpio: {library: \(lib.rawValue), chip: gpiochip0, buzzer: {line: GPIO18}, button: {line: GPIO17, bias: pull-up}, led: {line: GPIO27}}
            alarm: {countdown: 5, final-phase: 2}
            state: {directory: "\(state)"}
            metrics: {enabled: false}
            wearer: {name: Test Wearer, location: the lab}
            contacts:
              - {name: Anna, phone: "\(Self.anna)"}
              - {name: Ben, phone: "\(Self.ben)"}
              - {name: Cara, phone: "\(Self.cara)"}
            channels:
              sms: {type: twilio-sms, \(account), reply-poll-interval: 2}
              call: {type: twilio-call, \(account), call-poll-interval: 1}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func posts(_ receiver: Receiver, _ resource: String, to: String) -> [ReceivedRequest] {
        receiver.requests.filter { $0.method != "GET" && $0.path.hasSuffix(resource) && $0.form?["To"] == to }
    }

    @Test(arguments: GPIOLib.allCases)
    func anUnansweredCallEscalatesAReplyAcknowledgesAndTheWearerHearsBoth(lib: GPIOLib) async throws {
        let receiver = try Receiver(["--call-script", "\(Self.anna)=ringing@0.5,no-answer@2"])
        let state = NSTemporaryDirectory() + "fg-caregiver-\(UUID().uuidString.prefix(8))"
        let run = try GPIOEmulatorRun(["run", "--config", try config(receiver, state: state, lib: lib), "--duration", "32"], library: lib)
        #expect(run.waitForLog("fall suspected", timeout: 25), "\(run.stderr)")
        // The fall alert goes out; Anna's call rings out and Ben is called at once.
        #expect(await until(25) { !posts(receiver, "Calls.json", to: Self.ben).isEmpty }, "\(run.stderr)")
        #expect(receiver.requests.contains { $0.path.hasSuffix("Messages.json") && $0.method != "GET" }, "the fall alert by SMS")
        let annasCall = try #require(posts(receiver, "Calls.json", to: Self.anna).first)
        let bensCall = try #require(posts(receiver, "Calls.json", to: Self.ben).first)
        let escalated = bensCall.t - (annasCall.t + 2)
        print("no-answer visible → Ben's call: \(String(format: "%.2f", escalated)) s (limit 15)")
        #expect(escalated > 0 && escalated <= 15)
        // Let the delivered pattern play a full period, as the emulator saw it (a beep, then the
        // next 6 s later), then Ben replies: not a fixed time after the SMS, which under load left
        // less than a period between the delivery reaching the alarm and the acknowledgement.
        let periodPlayed = await until(25) { Self.deliveredPeriod(in: Self.pulses((try? run.levels(offset: 18)) ?? [])) }
        #expect(periodPlayed, "a full period of the delivered pattern: \(Self.pulses((try? run.levels(offset: 18)) ?? []).suffix(6).map { Int($0.ms) })")
        let replied = Date().timeIntervalSince1970
        try receiver.inbound(from: Self.ben, body: "OK")
        #expect(run.wait() == 0, "\(run.stderr)")

        // Everyone is told who is handling it, after the reply.
        for contact in [Self.anna, Self.ben, Self.cara] {
            let told = posts(receiver, "Messages.json", to: contact).filter { $0.t > replied }
            #expect(told.contains { $0.form?["Body"]?.contains("Ben (SMS reply) is handling incident FG-1") == true },
                    "\(contact): \(told.map { $0.form?["Body"] ?? "" })")
        }
        let acknowledgedAt = try #require(receiver.requests.first { $0.t > replied && $0.form?["Body"]?.contains("is handling") == true }).t
        print("reply \"OK\" → follow-up to the others: \(String(format: "%.2f", acknowledgedAt - replied)) s (two polls: 4 s)")
        #expect(acknowledgedAt - replied <= 4 + 1, "acknowledged within two polling intervals (and sent)")
        #expect(posts(receiver, "Calls.json", to: Self.cara).isEmpty, "no further escalation")

        // The incident log names the contact and the channel.
        let log = try String(contentsOfFile: state + "/incidents.jsonl", encoding: .utf8)
        let events = log.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let kinds = events.compactMap { $0["event"] as? String }
        #expect(kinds.contains("alert-delivered") && kinds.contains("contact-reached"), "\(kinds)")
        print("incident log: \(events.map { "\($0["event"] ?? "?")@\($0["time"] ?? "?")" })")
        let ack = try #require(events.first { $0["event"] as? String == "acknowledged" }, "\(kinds)")
        #expect((ack["detail"] as? String)?.contains("Ben (SMS reply)") == true, "\(ack)")

        // The status shows who is handling it.
        let status = try String(contentsOfFile: state + "/status.json", encoding: .utf8)
        #expect(status.contains(#""acknowledged_by" : "Ben (SMS reply)""#), "\(status)")

        // The buzzer: the delivered pattern (one 150 ms beep, ~5.85 s of quiet), then help coming
        // (three ~700 ms tones).
        let pulses = Self.pulses(try run.levels(offset: 18))
        let long = pulses.enumerated().filter { $0.element.ms > 600 && $0.element.ms < 850 }
        #expect(long.count == 3, "three help-coming tones: \(pulses.map { Int($0.ms) })")
        let firstLong = try #require(long.first?.offset)
        let before = pulses[..<firstLong]
        #expect(Self.deliveredPeriod(in: Array(before)), "the delivered pattern (a beep every 6 s) before help coming: \(before.suffix(6).map { (Int($0.ms), $0.start) })")
        let t0 = pulses.first?.start ?? 0
        print("buzzer pulses (ms at s): \(pulses.map { "\(Int($0.ms))@\(String(format: "%.2f", Double($0.start - t0) / 1e9))" })")
    }

    /// The buzzer's completed pulses, `(start, length)`, on the emulator's clock (each stamp taken
    /// in fallguard at its ioctl).
    static func pulses(_ levels: [(t: Int64, value: Int)]) -> [(start: Int64, ms: Double)] {
        zip(levels, levels.dropFirst()).filter { $0.value == 1 && $1.value == 0 }.map { ($0.t, Double($1.t - $0.t) / 1e6) }
    }

    /// A full period of the delivered pattern: a 150 ms beep that starts 6 s (±0.5) after the
    /// previous pulse started, with nothing between (no other pattern has a 6 s gap: the alert
    /// being sent beeps twice every 3 s). The previous pulse may be longer than 150 ms: when
    /// the delivery arrives during a beep of the alert being sent, the line stays on and the
    /// delivered beep's 150 ms start then.
    static func deliveredPeriod(in pulses: [(start: Int64, ms: Double)]) -> Bool {
        zip(pulses, pulses.dropFirst()).contains { a, b in
            let gap = Double(b.start - a.start) / 1e9
            return a.ms > 100 && a.ms < 320 && b.ms > 100 && b.ms < 200 && gap > 5.5 && gap < 6.5
        }
    }
}
