import FallGuardConfig
import FallGuardFieldTest
import FallGuardMQTT
import FallGuardStation
@testable import FallGuardDaemon
import FallGuardTestSupport
import Foundation
import Testing

/// Issue 37 item 4, presence by the bridge's own button, end to end: a real `fallguard run`
/// (the IIO emulator's MPU6050 streaming a real fall, the GPIO emulator's button through the
/// real libgpiod), a real mosquitto, and the station. The alert goes out, a member accepts it on
/// the station (the bridge takes the acknowledgement), then the button is held at the bridge:
/// the bridge publishes presence, the station records the step with its time and the accepting
/// member's name, and the call leaves "in progress" for its reset.
@Suite(.serialized, .enabled(if: Emulator.available, GPIOEmulatorRun.skipReason))
struct StationPresenceEndToEndTests {
    @Test func aLongPressOfTheBridgesButtonAfterTheStationAcceptedIsPresenceAtTheBedside() async throws {
        let (broker, folder, section, server, running) = try await Self.station("presence")
        defer { running.cancel() }
        let (jar, base) = (folder + "/cookies", "http://" + section.listen)

        let (run, state) = try Self.bridge("room-e2e", broker: broker, secret: section.acknowledgeSecret ?? "", folder: folder)
        defer { if run.wait() != 0 { Issue.record("the bridge: \(run.stderr)") } }

        // The alert out at the station, accepted there by Anna.
        func record() -> PastIncidents.Record? { server.history.newestFirst(now: Date().timeIntervalSince1970).first { $0.device == "room-e2e" } }
        #expect(await until(40) { record()?.alertOut == true && record()?.incident != nil }, "no alert at the station: \(run.stderr)")
        let incident = try #require(record()?.incident)
        let csrf = try await StationTests.get(base + "/", ["-b", jar]).body.components(separatedBy: "data-csrf=\"").dropFirst().first?
            .components(separatedBy: "\"").first ?? ""
        #expect(try await StationTests.get(base + "/ack", ["-b", jar, "--data", "csrf=\(csrf)&device=room-e2e&incident=\(incident)"]).status == 204)
        #expect(await until(10) { record()?.acknowledgedBy == "Anna Smith (station)" }, "the bridge did not take it: \(String(describing: record()))")
        let status = { (try? String(contentsOfFile: state + "/status.json", encoding: .utf8)) ?? "" }
        #expect(await until(5) { status().contains("Anna Smith (station)") }, "the bridge shows who accepted: \(status())")

        // At the bedside: the button held 2.5 s (long-press 2 s).
        let held = Date()
        #expect(try run.ctl("hold 17 2500").hasPrefix("ok"))
        #expect(await until(10) { record()?.presentAt != nil }, "no presence at the station: \(String(describing: record()))\n\(run.stderr)")
        let r = try #require(record())
        let after = Date().timeIntervalSince(held)
        #expect(r.presentBy == "Anna Smith (bridge button)", "\(String(describing: r.presentBy))")
        let presentAt = try #require(r.presentAt)
        #expect(presentAt >= held.timeIntervalSince1970 + 1.9 && presentAt <= held.timeIntervalSince1970 + 5,
                "recorded at \(presentAt - held.timeIntervalSince1970) s after the press began")
        #expect(r.noPresenceEscalatedAt == nil && r.resetAt == nil)
        // The bridge shows the step; no help request went out; the station refuses a second presence.
        #expect(await until(5) { status().contains("\"present_by\"") }, "\(status())")
        let log = (try? String(contentsOfFile: state + "/incidents.jsonl", encoding: .utf8)) ?? ""
        #expect(log.contains("\"staff-present\"") && !log.contains("\"help-requested\""), "\(log)")
        #expect(try await StationTests.get(base + "/step", ["-b", jar, "--data", "csrf=\(csrf)&key=\(r.key)&step=presence"]).status == 409)
        #expect(try await StationTests.get(base + "/step", ["-b", jar, "--data", "csrf=\(csrf)&key=\(r.key)&step=reset"]).status == 204)
        let csv = try await StationTests.get(base + "/incidents.csv", ["-b", jar]).body
        #expect(csv.contains("Anna Smith (bridge button)"), "\(csv)")
        // The station's reset reaches the bridge, which shows and archives it.
        #expect(await until(10) { Self.lastIncident(status())["reset_by"] as? String == "Anna Smith (station)" }, "\(status())")
        let archived = try IncidentArchive(folder: IncidentArchive.folder(inState: state)).record(incident)
        #expect(archived.timeline.map(\.event).suffix(2) == ["staff-present", "staff-reset"], "\(archived.timeline)")
        print("station presence by the bridge's button: recorded at the station \(String(format: "%.2f", after)) s after the press began "
              + "(long-press 2 s), \(String(format: "%.1f", r.secondsToPresence ?? -1)) s after the acceptance")
        running.cancel()
        _ = await running.result
    }

    /// Issue 37 item 4, the station's own steps at the bridge: "I'm here" and "Reset" taken on
    /// the page travel on the signed acknowledgement path (the bridge's key, the name and the
    /// step inside the signed text, the incident the bridge accepted). The bridge shows each in
    /// `status.json` and keeps each in the incident's archived record with its time and name; a
    /// correctly signed reset before the acceptance leaves the alert out, and a step signed with
    /// another key is refused.
    @Test func theStationsPresenceAndResetReachTheBridgeAndItsArchiveButSilenceNothing() async throws {
        let (broker, folder, section, server, running) = try await Self.station("steps")
        defer { running.cancel() }
        let (jar, base) = (folder + "/cookies", "http://" + section.listen)
        let secret = try #require(section.secret(for: "room-steps"))

        let (run, state) = try Self.bridge("room-steps", broker: broker, secret: secret, folder: folder)
        defer { if run.wait() != 0 { Issue.record("the bridge: \(run.stderr)") } }

        func record() -> PastIncidents.Record? { server.history.newestFirst(now: Date().timeIntervalSince1970).first { $0.device == "room-steps" } }
        #expect(await until(40) { record()?.alertOut == true && record()?.incident != nil }, "no alert at the station: \(run.stderr)")
        let incident = try #require(record()?.incident)
        let csrf = try await StationTests.get(base + "/", ["-b", jar]).body.components(separatedBy: "data-csrf=\"").dropFirst().first?
            .components(separatedBy: "\"").first ?? ""
        let status = { (try? String(contentsOfFile: state + "/status.json", encoding: .utf8)) ?? "" }
        func last(_ key: String) -> String? { Self.lastIncident(status())[key] as? String }
        let topic = MQTTTopics(prefix: "fallguard", device: "room-steps").acknowledge
        func now() -> Int64 { Int64(Date().timeIntervalSince1970.rounded()) }

        // Before any acceptance a signed reset is no acknowledgement: the alert stays out.
        let early = String(decoding: MQTTSiteClient.acknowledgement(device: "room-steps", incident: incident, by: "Eve Intruder",
                                                                    secret: secret, time: now(), step: .reset), as: UTF8.self)
        try mosquittoPublish(broker, topic: topic, early)
        try await Task.sleep(for: .seconds(1.5))
        #expect(Self.state(status()) == "alert-out", "a step silenced the alert: \(status())")

        #expect(try await StationTests.get(base + "/ack", ["-b", jar, "--data", "csrf=\(csrf)&device=room-steps&incident=\(incident)"]).status == 204)
        #expect(await until(10) { last("acknowledged_by") == "Anna Smith (station)" && Self.state(status()) == "monitoring" }, "\(status())")

        // Signed with a key that is not this bridge's: not taken.
        let foreign = String(decoding: MQTTSiteClient.acknowledgement(device: "room-steps", incident: incident, by: "Eve Intruder",
                                                                      secret: "not-the-key-of-room-steps-0000",
                                                                      time: now(), step: .presence), as: UTF8.self)
        try mosquittoPublish(broker, topic: topic, foreign)
        let r0 = try #require(record())
        let here = Date()
        #expect(try await StationTests.get(base + "/step", ["-b", jar, "--data", "csrf=\(csrf)&key=\(r0.key)&step=presence"]).status == 204)
        #expect(await until(10) { last("present_by") == "Anna Smith (station)" && last("present_at") != nil }, "\(status())\n\(run.stderr)")
        let presentShown = Date().timeIntervalSince(here)
        #expect(!status().contains("Eve Intruder"), "\(status())")
        let reset = Date()
        #expect(try await StationTests.get(base + "/step", ["-b", jar, "--data", "csrf=\(csrf)&key=\(r0.key)&step=reset"]).status == 204)
        #expect(await until(10) { last("reset_by") == "Anna Smith (station)" && last("reset_at") != nil }, "\(status())")
        let resetShown = Date().timeIntervalSince(reset)

        // The archive keeps each step with its time and name; the refused ones are in the log only.
        let archived = try IncidentArchive(folder: IncidentArchive.folder(inState: state)).record(incident)
        let steps = archived.timeline.filter { ["acknowledged", "staff-present", "staff-reset"].contains($0.event) }
        #expect(steps.map(\.event) == ["acknowledged", "staff-present", "staff-reset"], "\(archived.timeline)")
        #expect(steps.allSatisfy { $0.detail.contains("Anna Smith (station)") && !$0.time.isEmpty }, "\(steps)")
        #expect(!archived.timeline.contains { $0.detail.contains("Eve Intruder") }, "\(archived.timeline)")
        #expect(run.stderr.contains("wrong hmac"), "the foreign step refused: \(run.stderr)")
        let log = (try? String(contentsOfFile: state + "/incidents.jsonl", encoding: .utf8)) ?? ""
        #expect(log.contains("reset of \(incident) by Eve Intruder (station) ignored"), "the early reset: \(log)")
        print("station steps at the bridge: I'm here shown in status.json \(String(format: "%.2f", presentShown)) s after the POST, "
              + "reset \(String(format: "%.2f", resetShown)) s")
        running.cancel()
        _ = await running.result
    }

    static func lastIncident(_ status: String) -> [String: Any] {
        let json = (try? JSONSerialization.jsonObject(with: Data(status.utf8))) as? [String: Any]
        return json?["last_incident"] as? [String: Any] ?? [:]
    }

    static func state(_ status: String) -> String? {
        ((try? JSONSerialization.jsonObject(with: Data(status.utf8))) as? [String: Any])?["state"] as? String
    }

    /// A broker and a station on it (calls never escalate) with anna signed in (cookies in
    /// `<folder>/cookies`).
    static func station(_ name: String) async throws
        -> (MosquittoBroker, String, StationSection, StationServer, Task<Void, any Error>) {
        let broker = try await MosquittoBroker()
        let folder = temporaryFolder("station-" + name)
        var section = StationTests.station(on: broker, clientID: "station-\(name)-under-test")
        section.stateDirectory = folder + "/station-state"
        section.escalation.acceptWithin = 3600
        let (server, running) = try await StationTests.start(section, broker: broker, jar: folder + "/cookies")
        return (broker, folder, section, server, running)
    }

    /// A real `fallguard run` as `device` on the IIO emulator's MPU6050 playing a short fall and
    /// the GPIO emulator, its MQTT channel on `broker` with `secret`; its state directory.
    static func bridge(_ device: String, broker: MosquittoBroker, secret: String, folder: String) throws -> (GPIOEmulatorRun, String) {
        let state = folder + "/bridge-state"
        let config = folder + "/bridge.yaml"
        try """
            device: \(device)
            sensor: {uri: "local:", mode: buffered}
            gpio: {library: v1, chip: gpiochip0, buzzer: {line: GPIO18}, button: {line: GPIO17, bias: pull-up}, led: {line: GPIO27}}
            alarm: {countdown: 5, final-phase: 2}
            state: {directory: "\(state)"}
            metrics: {enabled: false}
            wearer: {name: Test Wearer, location: the lab}
            channels:
              mqtt: {type: mqtt, host: 127.0.0.1, port: \(broker.port), acknowledge-secret: "\(secret)"}
            \(broadcastPolicy("mqtt"))
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let fall = try shortFallRecording(in: folder)
        let run = try GPIOEmulatorRun(["run", "--config", config, "--duration", "45"],
                                      wrapper: [Emulator.root + "/tools/iio-emulator/iio-emu", "--model", "mpu6050", "--recording", fall, "--"])
        return (run, state)
    }
}
