import FallGuardCore
@testable import FallGuardMQTT
import Foundation
import Synchronization
import Testing
import FallGuardTestSupport

@Suite struct MQTTSettingsTests {
    // Reading the keys: FallGuardConfigTests' ChannelSectionTests.

    @Test func theEffectiveValuesFillTheGaps() {
        let s = MQTTChannelSettings()
        #expect(s.host == "localhost" && s.effectivePort == 1883 && s.topicPrefix == "fallguard")
        #expect(s.effectiveDevice == MQTTTopics.deviceName(hostname: currentHostname(), machineID: currentMachineID()))
        #expect(s.effectiveClientID == "fallguard-\(s.effectiveDevice)")
        #expect(MQTTChannelSettings(tls: true).effectivePort == 8883)
    }

    @Test func topicsGiveEachBridgeItsOwnBranch() {
        let t = MQTTTopics(prefix: "care", device: "flat 3.b")
        #expect(t.alert == "care/flat 3.b/alert" && t.availability == "care/flat 3.b/availability")
        #expect(t.acknowledge == "care/flat 3.b/ack" && t.state == "care/flat 3.b/state" && t.lastIncident == "care/flat 3.b/incident")
        #expect(t.nodeID == "fallguard_flat_3_b")
        #expect(t.discoveryConfig(component: "button", object: "acknowledge") == "homeassistant/button/fallguard_flat_3_b/acknowledge/config")
        #expect(MQTTTopics.topicSafe("Pi+Kitchen/1") == "pi-kitchen-1")
        #expect(MQTTTopics.levelProblem("ok-name") == nil)
        #expect(MQTTTopics.prefixProblem("a//b") != nil && MQTTTopics.prefixProblem("a/b") == nil)
    }

    @Test func discoveryDescribesFiveEntitiesOfOneDevice() throws {
        let configs = HomeAssistantDiscovery(topics: MQTTTopics(prefix: "fallguard", device: "hall")).configs
        #expect(configs.map(\.topic) == [
            "homeassistant/binary_sensor/fallguard_hall/fall/config", "homeassistant/binary_sensor/fallguard_hall/not_worn/config",
            "homeassistant/sensor/fallguard_hall/state/config",
            "homeassistant/sensor/fallguard_hall/last_incident/config", "homeassistant/button/fallguard_hall/acknowledge/config",
        ])
        let objects = try configs.map { try #require(try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]) }
        #expect(objects[0]["value_template"] as? String == "{{ 'ON' if value == 'alert-out' else 'OFF' }}")
        #expect(objects[0]["device_class"] as? String == "safety")
        #expect(objects[1]["state_topic"] as? String == "fallguard/hall/worn" && objects[1]["device_class"] as? String == "problem")
        #expect(objects[1]["value_template"] as? String == "{{ 'ON' if value == 'not-worn' else 'OFF' }}")
        #expect(objects[2]["options"] as? [String] == AlarmStatus.allCases.map(\.rawValue))
        #expect(objects[4]["command_topic"] as? String == "fallguard/hall/ack")
        // The button sends the incident the "Last incident" sensor shows, and nothing else.
        #expect(objects[4]["command_template"] as? String
                == #"{"incident": "{{ states('sensor.fallguard_hall_last_incident') }}", "by": "Home Assistant"}"#)
        #expect(objects[4]["payload_press"] == nil)
        #expect(Set(objects.compactMap { $0["unique_id"] as? String }).count == 5)
        // Home Assistant 2025.10+: default_entity_id (domain included), no deprecated object_id.
        #expect(objects.map { $0["default_entity_id"] as? String } == [
            "binary_sensor.fallguard_hall_fall", "binary_sensor.fallguard_hall_not_worn", "sensor.fallguard_hall_state",
            "sensor.fallguard_hall_last_incident", "button.fallguard_hall_acknowledge",
        ])
        #expect(objects.allSatisfy { $0["object_id"] == nil })

        // With an acknowledge-secret the button would publish the secret: it is not discovered.
        let guarded = HomeAssistantDiscovery(topics: MQTTTopics(prefix: "fallguard", device: "hall"), acknowledgeButton: false)
        #expect(guarded.configs.map(\.topic) == configs.prefix(4).map(\.topic))
        #expect(guarded.withdrawn == ["homeassistant/button/fallguard_hall/acknowledge/config"])
    }

    @Test func acknowledgementPayloads() throws {
        func parse(_ text: String) throws -> MQTTAcknowledgement { try MQTTAcknowledgement(payload: Array(text.utf8)) }
        #expect(try parse(" FG-3\n") == MQTTAcknowledgement(incident: "FG-3"))
        #expect(try parse(#"{"incident":"FG-3","by":"Anna"}"#) == MQTTAcknowledgement(incident: "FG-3", by: "Anna"))
        #expect(try parse(#"{"incident":"FG-3","token":"t0k"}"#) == MQTTAcknowledgement(incident: "FG-3", proof: .token("t0k")))
        #expect(try parse(#"{"incident":"FG-3","hmac":"AB","time":17}"#) == MQTTAcknowledgement(incident: "FG-3", proof: .hmac("ab", time: 17)))
        #expect(try parse(#"{"by":"Home Assistant"}"#) == MQTTAcknowledgement(incident: nil, by: "Home Assistant"))
        #expect(try parse("") == MQTTAcknowledgement(incident: nil))
        for bad in [#"{"incident":3}"#, "two words", #"{"by":"a\u0007b"}"#, #"{"incident":"FG-3","hmac":"ab"}"#,
                    #"{"incident":"FG-3","token":"x","hmac":"ab","time":1}"#, #"{"incident":"FG-3","time":"now"}"#, String(repeating: "x", count: 2_000)] {
            #expect(throws: MQTTAcknowledgementError.self, "\(bad)") { try parse(bad) }
        }
        #expect(throws: MQTTAcknowledgementError.self) { try MQTTAcknowledgement(payload: [0xFF, 0xFE]) }
    }

    /// An ack names its incident; with a secret it proves it knows it, for this bridge, now.
    @Test func theGateTakesOnlyAcksThatNameTheirIncidentAndProveTheSecret() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let open = MQTTAcknowledgementGate(device: "hall", secret: nil)
        #expect(try open.incident(of: MQTTAcknowledgement(incident: "FG-3"), now: now).get() == "FG-3")
        #expect(throws: MQTTAcknowledgementError.self) { try open.incident(of: MQTTAcknowledgement(incident: nil, by: "Home Assistant"), now: now).get() }

        let secret = "0123456789abcdef-hall"
        let gate = MQTTAcknowledgementGate(device: "hall", secret: secret)
        let t: Int64 = 1_800_000_000
        func accepted(_ ack: MQTTAcknowledgement) -> Bool { (try? gate.incident(of: ack, now: now).get()) == "FG-3" }
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3")), "no proof")
        // Issue 28 item 9: HMAC by default; the token (a reusable secret) only in token mode.
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3", proof: .token(secret))), "hmac mode takes no token")
        let tokenGate = MQTTAcknowledgementGate(device: "hall", secret: secret, acceptsToken: true)
        func tokenAccepted(_ ack: MQTTAcknowledgement) -> Bool { (try? tokenGate.incident(of: ack, now: now).get()) == "FG-3" }
        #expect(tokenAccepted(MQTTAcknowledgement(incident: "FG-3", proof: .token(secret))))
        #expect(!tokenAccepted(MQTTAcknowledgement(incident: "FG-3", proof: .token(secret + "x"))))
        #expect(!tokenAccepted(MQTTAcknowledgement(incident: "FG-3", proof: .token(String(secret.dropLast())))))
        let mac = { (device: String, incident: String, time: Int64) in
            MQTTAcknowledgementGate.hmac(secret: secret, device: device, incident: incident, time: time)
        }
        #expect(accepted(MQTTAcknowledgement(incident: "FG-3", proof: .hmac(mac("hall", "FG-3", t - 60), time: t - 60))))
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3", proof: .hmac(mac("hall", "FG-3", t - 60), time: t - 59))), "time not the signed one")
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3", proof: .hmac(mac("hall", "FG-2", t), time: t))), "another incident's")
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3", proof: .hmac(mac("kitchen", "FG-3", t), time: t))), "another bridge's")
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3", proof: .hmac(mac("hall", "FG-3", t - 400), time: t - 400))), "too old to replay")
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3", proof: .hmac(mac("hall", "FG-3", .min), time: .min))))
        #expect(!accepted(MQTTAcknowledgement(incident: "FG-3", proof: .hmac("zz", time: t))))
    }

    /// Issue 40 items 2 and 12: the name is inside the signed text (`fallguard-ack-2`), so a
    /// valid acknowledgement with `by` rewritten is refused; the older text without the name
    /// still acknowledges but proves no name; and an HMAC is taken once within its window.
    @Test func anHMACBindsTheNameAndIsTakenOnce() {
        let secret = "0123456789abcdef-porch"
        let now = Date(timeIntervalSince1970: 1_800_000_010)
        let t: Int64 = 1_800_000_000
        let gate = MQTTAcknowledgementGate(device: "porch", secret: secret)
        let v2 = MQTTAcknowledgementGate.hmac(secret: secret, device: "porch", incident: "FG-5", time: t, by: "Anna Smith (station)")
        #expect(throws: MQTTAcknowledgementError.self) {
            try gate.check(MQTTAcknowledgement(incident: "FG-5", by: "Mallory Rewritten (station)", proof: .hmac(v2, time: t)), now: now).get()
        }
        #expect((try? gate.check(MQTTAcknowledgement(incident: "FG-5", by: "Anna Smith (station)", proof: .hmac(v2, time: t)), now: now).get())
                == .init(incident: "FG-5", provenBy: "Anna Smith (station)"))
        #expect(throws: MQTTAcknowledgementError.self, "the same acknowledgement published again") {
            try gate.check(MQTTAcknowledgement(incident: "FG-5", by: "Anna Smith (station)", proof: .hmac(v2, time: t)), now: now).get()
        }
        let v1 = MQTTAcknowledgementGate.hmac(secret: secret, device: "porch", incident: "FG-6", time: t)
        #expect((try? gate.check(MQTTAcknowledgement(incident: "FG-6", by: "Anyone", proof: .hmac(v1, time: t)), now: now).get())
                == .init(incident: "FG-6", provenBy: nil), "the old text acknowledges, its name unproven")
        // Another gate (a restarted bridge) has not seen it: the window still bounds a replay.
        let later = Date(timeIntervalSince1970: 1_800_000_000 + 301)
        #expect(throws: MQTTAcknowledgementError.self) {
            try MQTTAcknowledgementGate(device: "porch", secret: secret)
                .check(MQTTAcknowledgement(incident: "FG-5", by: "Anna Smith (station)", proof: .hmac(v2, time: t)), now: later).get()
        }
    }

    /// Issue 37 item 4: a station's presence and reset travel on the acknowledgement path, each
    /// signed over its own text (`fallguard-step-1`, the name and the step inside): taken as that
    /// step only, once; an acknowledgement's MAC with a step added, a step's MAC with the step
    /// removed or changed, a rewritten name, a token or a bridge without a secret: refused.
    @Test func aStationsStepIsSignedOverTheStepAndNeverPassesForAnAcknowledgement() throws {
        let secret = "0123456789abcdef-porch"
        let now = Date(timeIntervalSince1970: 1_800_000_010)
        let t: Int64 = 1_800_000_000
        let gate = MQTTAcknowledgementGate(device: "porch", secret: secret)
        let by = "Anna Smith"
        let payload = MQTTSiteClient.acknowledgement(device: "porch", incident: "FG-5", by: by, secret: secret, time: t, step: .reset)
        let parsed = try MQTTAcknowledgement(payload: payload)
        #expect(parsed.step == .reset && parsed.by == by && parsed.incident == "FG-5")
        guard case let .hmac(mac, _) = parsed.proof else { Issue.record("no hmac in \(parsed)"); return }
        func check(_ ack: MQTTAcknowledgement, on g: MQTTAcknowledgementGate = gate) -> MQTTAcknowledgementGate.Checked? {
            try? g.check(ack, now: now).get()
        }
        #expect(check(MQTTAcknowledgement(incident: "FG-5", by: by, proof: .hmac(mac, time: t))) == nil, "the step without its step: no acknowledgement")
        #expect(check(MQTTAcknowledgement(incident: "FG-5", by: by, step: .presence, proof: .hmac(mac, time: t))) == nil, "another step")
        #expect(check(MQTTAcknowledgement(incident: "FG-5", by: "Eve", step: .reset, proof: .hmac(mac, time: t))) == nil, "another name")
        #expect(check(MQTTAcknowledgement(incident: "FG-5", step: .reset, proof: .hmac(mac, time: t))) == nil, "no name")
        #expect(check(MQTTAcknowledgement(incident: "FG-5", by: by, step: .reset, proof: .hmac(mac, time: t)), on: MQTTAcknowledgementGate(device: "porch", secret: nil)) == nil,
                "a bridge without a secret takes no step")
        #expect(check(MQTTAcknowledgement(incident: "FG-5", by: by, step: .reset, proof: .token(secret)),
                      on: MQTTAcknowledgementGate(device: "porch", secret: secret, acceptsToken: true)) == nil, "a token proves no step")
        #expect(check(parsed) == .init(incident: "FG-5", provenBy: by, step: .reset))
        #expect(check(parsed) == nil, "taken once")
        // An acknowledgement's MAC with a step added: refused (the station's acceptance is no step).
        let ack = MQTTAcknowledgementGate.hmac(secret: secret, device: "porch", incident: "FG-6", time: t, by: by)
        #expect(check(MQTTAcknowledgement(incident: "FG-6", by: by, step: .presence, proof: .hmac(ack, time: t))) == nil)
        #expect(throws: MQTTAcknowledgementError.self) { try MQTTAcknowledgement(payload: Array(#"{"incident":"FG-5","step":"silence"}"#.utf8)) }
    }

    /// Issue 36 item 3: the bridge's wall clock stepped +3 days, then -1 h (NTP on a Pi without
    /// a real-time clock, `date -s`): a caregiver's acknowledgement signed on a right clock is
    /// still taken, one signed on the stepped clock too, a stale one (an hour old on both
    /// clocks) is not. A clock known not to be synchronised holds no time against it.
    @Test func aSteppedWallClockNeitherRefusesACaregiverNorTakesAStaleAcknowledgement() {
        let secret = "0123456789abcdef-porch"
        let trueTime = 1_800_000_000.0
        let step = Mutex(0.0), elapsed = Mutex(0.0), synchronized = Mutex<Bool?>(true)
        let clock = SteadyWallClock(wall: { trueTime + elapsed.withLock { $0 } + step.withLock { $0 } },
                                    monotonic: { elapsed.withLock { $0 } })
        let gate = MQTTAcknowledgementGate(device: "porch", secret: secret, clock: clock,
                                           clockSynchronized: { synchronized.withLock { $0 } })
        func ack(_ incident: String, at time: Double) -> MQTTAcknowledgement {
            let t = Int64(time)
            return MQTTAcknowledgement(incident: incident, by: "Anna Smith (station)",
                                       proof: .hmac(MQTTAcknowledgementGate.hmac(secret: secret, device: "porch", incident: incident,
                                                                                 time: t, by: "Anna Smith (station)"), time: t))
        }
        func taken(_ a: MQTTAcknowledgement) -> Bool { (try? gate.check(a).get()) != nil }
        elapsed.withLock { $0 = 20 }
        #expect(taken(ack("FG-1", at: trueTime + 20)), "before any step")
        step.withLock { $0 = 3 * 86_400 }   // +3 days
        #expect(taken(ack("FG-2", at: trueTime + 20)), "signed on the true clock after the bridge's went 3 days ahead")
        #expect(taken(ack("FG-3", at: trueTime + 20 + 3 * 86_400)), "signed on a clock that agrees with the stepped one")
        #expect(!taken(ack("FG-4", at: trueTime + 20 - 3_600)), "an hour old on the true clock")
        #expect(!taken(ack("FG-4", at: trueTime + 20 + 3 * 86_400 - 3_600)), "an hour old on the stepped clock")
        step.withLock { $0 = -3_600 }   // -1 h from the true time
        elapsed.withLock { $0 = 80 }
        #expect(taken(ack("FG-5", at: trueTime + 80)), "signed on the true clock after the bridge's went an hour back")
        #expect(!taken(ack("FG-6", at: trueTime + 80 - 7_200)), "two hours old")
        // Not synchronised: the bridge's time means nothing; the MAC, the incident and once still hold.
        synchronized.withLock { $0 = false }
        #expect(taken(ack("FG-7", at: trueTime + 80 + 9 * 86_400)), "not synchronised: a caregiver's clock 9 days from the bridge's")
        #expect(!taken(ack("FG-7", at: trueTime + 80 + 9 * 86_400)), "still taken once")
        synchronized.withLock { $0 = nil }
        #expect(!taken(ack("FG-8", at: trueTime + 80 + 9 * 86_400)), "not known to be unsynchronised: held to the clocks")
    }

    /// Issue 28 item 11: a flood of refused acknowledgements is logged a few in full a minute,
    /// then as one count.
    @Test func refusedAcknowledgementsAreLoggedAFewAMinuteThenCounted() {
        var log = RefusalLog()
        var full = 0, counted = 0
        for i in 0..<10_000 {   // 10,000 in 0.3 s, as in the issue
            let (say, suppressed) = log.note(now: 100 + Double(i) * 0.3 / 10_000)
            full += say ? 1 : 0
            counted += suppressed
        }
        #expect(full == RefusalLog.inFull && counted == 0 && log.pending == 10_000 - RefusalLog.inFull)
        let (say, suppressed) = log.note(now: 161)   // the next minute: the count, and this one in full
        #expect(say && suppressed == 10_000 - RefusalLog.inFull)
    }

    @Test func theDefaultDeviceTellsClonedBridgesApart() {
        let a = MQTTTopics.deviceName(hostname: "raspberrypi", machineID: "6d1f0b0e5f0c4f3e9d7d2c5b8a1e3f00")
        let b = MQTTTopics.deviceName(hostname: "raspberrypi", machineID: "0f9b8e7d6c5b4a3928171615a4b3c2d1")
        #expect(a.hasPrefix("raspberrypi-") && a.count == "raspberrypi-".count + 6 && a != b)
        #expect(a == MQTTTopics.deviceName(hostname: "raspberrypi", machineID: "6d1f0b0e5f0c4f3e9d7d2c5b8a1e3f00"), "stable")
        #expect(!a.contains("6d1f0b"), "the machine id itself is not published")
        #expect(MQTTTopics.deviceName(hostname: "Pi+Kitchen", machineID: nil) == "pi-kitchen")
        #expect(MQTTTopics.levelProblem(MQTTTopics.deviceName(hostname: String(repeating: "h", count: 80), machineID: "x")) == nil)
    }

    /// fuzz/corpus/acknowledgement, the seeds and what fuzzing found (bench/fuzz.sh): each payload
    /// is an acknowledgement within the limits or an error that says why.
    @Test func everyFuzzCorpusPayloadIsAnAcknowledgementOrSaysWhy() throws {
        var parsed: [String: MQTTAcknowledgement] = [:]
        for (name, payload) in fuzzCorpus("acknowledgement") {
            do {
                let ack = try MQTTAcknowledgement(payload: payload)
                #expect(ack.incident.map { !$0.isEmpty && $0.unicodeScalars.count <= 64 } ?? true, "\(name)")
                #expect(ack.by.map { !$0.isEmpty && $0.unicodeScalars.count <= 100 } ?? true, "\(name)")
                let gate = MQTTAcknowledgementGate(device: "fuzz", secret: "0123456789abcdef-fuzz")
                if case .failure(let why) = gate.incident(of: ack) { #expect(!why.description.isEmpty, "\(name)") }
                parsed[name] = ack
            } catch {
                #expect(!error.description.isEmpty, "\(name)")
            }
        }
        #expect(parsed["id"] == MQTTAcknowledgement(incident: "FG-3"))
        #expect(parsed["incident-by.json"] == MQTTAcknowledgement(incident: "FG-3", by: "Anna"))
        #expect(parsed["by.json"] == MQTTAcknowledgement(incident: nil, by: "Anna"))
        #expect(parsed["empty"] == MQTTAcknowledgement(incident: nil))
    }
}
