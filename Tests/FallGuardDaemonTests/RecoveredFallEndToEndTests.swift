import Foundation
import Testing
import FallGuardTestSupport

/// Issue 35 item 4, end to end with `fallguard run`: a real fall the wearer got up from
/// (FallAllD AD07 F08 R02, `Tests/FallGuardFieldTestTests/Fixtures/recovered/`) replayed as the
/// sensor, SMS and calls through the Twilio-compatible receiver on loopback. The countdown ends
/// when the wearer is up again: no alarm, no call, every contact told once that the wearer
/// fell and got up; the incident log, the archive and the page say "recovered-fall".
@Suite(.serialized) struct RecoveredFallEndToEndTests {
    static let fixture = repositoryRoot + "/Tests/FallGuardFieldTestTests/Fixtures/recovered/F08_AD07_R02.csv.gz"
    static let anna = "+447700900001", ben = "+447700900002"

    @Test func aRecoveredFallTellsTheContactsOnceAndRaisesNoAlarm() async throws {
        let receiver = try Receiver()
        let folder = temporaryFolder("recovered")
        let port = freeLoopbackPort()
        let account = "account-sid: \(twilioSID), auth-token: \(twilioToken), from: \"+15005550006\", base-url: \"\(receiver.base)\""
        try """
            sensor: {replay: "\(Self.fixture)"}
            alarm: {countdown: 20, final-phase: 5}
            gpio: {enabled: false}
            state: {directory: "\(folder)/state"}
            metrics: {listen: "127.0.0.1:\(port)"}
            wearer: {name: Margaret, location: the flat}
            contacts:
              - {name: Anna, phone: "\(Self.anna)"}
              - {name: Ben, phone: "\(Self.ben)"}
            channels:
              sms: {type: twilio-sms, \(account)}
              call: {type: twilio-call, \(account)}
            """.write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        let daemon = try BackgroundDaemon(["run", "--config", folder + "/config.yaml", "--duration", "40"], log: folder + "/daemon.log")
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) }; daemon.process.waitUntilExit() }
        #expect(daemon.waitFor("fall suspected", seconds: 30), "\(daemon.output)")
        let messages = { receiver.requests.filter { $0.method != "GET" && $0.path.hasSuffix("Messages.json") } }
        #expect(await until(20) { messages().count >= 2 }, "\(daemon.output.suffix(2000))")
        // The page shows it while the daemon runs.
        let page = try curl("http://127.0.0.1:\(port)/incidents")
        #expect(page.status == 200 && page.body.contains("recovered-fall"), "\(page.body.prefix(2000))")
        daemon.process.waitUntilExit()

        // Each contact once, with the recovered-fall text; no fall alert, no call.
        for contact in [Self.anna, Self.ben] {
            let bodies = messages().filter { $0.form?["To"] == contact }.compactMap { $0.form?["Body"] }
            #expect(bodies.count == 1 && bodies[0].hasPrefix("Margaret fell and got up again by themselves "), "\(contact): \(bodies)")
            #expect(bodies.first?.contains("No alarm was raised") == true && bodies.first?.contains("Incident FG-1") == true)
        }
        #expect(!messages().contains { $0.form?["Body"]?.contains("FALL ALERT") == true }, "no fall alert")
        #expect(!receiver.requests.contains { $0.path.hasSuffix("Calls.json") && $0.method != "GET" }, "no call")

        // The incident log: the countdown ended as a recovered fall, never expired.
        let log = try String(contentsOfFile: folder + "/state/incidents.jsonl", encoding: .utf8)
        let events = log.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let kinds = events.compactMap { $0["event"] as? String }
        #expect(kinds.contains("fall-suspected") && kinds.contains("recovered-fall") && !kinds.contains("countdown-expired"), "\(kinds)")
        let recovered = try #require(events.first { $0["event"] as? String == "recovered-fall" })
        print("recovered fall: \(recovered["detail"] ?? "")")
        // The archive keeps the signal and the outcome.
        let record = try String(contentsOfFile: folder + "/state/incidents/FG-1/incident.json", encoding: .utf8)
        #expect(record.contains("\"outcome\" : \"recovered-fall\""), "\(record.prefix(1500))")
    }
}
