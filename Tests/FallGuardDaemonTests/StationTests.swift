import FallGuardConfig
import FallGuardMQTT
import FallGuardStation
import FallGuardTestSupport
import FallGuardWeb
import Foundation
import Testing

/// The staff station (issue 30): the site model folded from the bridges' messages, the staff's
/// own logins, its file, and the whole of it in a real browser on a real broker.
@Suite struct StationTests {
    func fold(_ model: inout SiteModel, _ topic: String, _ payload: String, at now: Double) {
        model.apply(topic: topic, payload: Array(payload.utf8), now: now)
    }

    @Test func theSiteModelPutsOpenAlarmsFirstWithWhoWasToldAndWhoAnswered() {
        var site = SiteModel(roster: ["room-002": (wearer: "Margaret", location: "Room 2")])
        for d in ["room-001", "room-002", "room-010"] {
            fold(&site, "fallguard/\(d)/availability", "online", at: 100)
            fold(&site, "fallguard/\(d)/state", "monitoring", at: 100)
        }
        fold(&site, "fallguard/room-010/availability", "offline", at: 101)
        fold(&site, "homeassistant/sensor/fallguard_room-001/state/config", "{}", at: 101)
        fold(&site, "fallguard/room-002/ack", #"{"incident":"FG-1"}"#, at: 101)
        #expect(site.ordered.map(\.device) == ["room-001", "room-002", "room-010"] && site.openAlarms.isEmpty)
        #expect(site.bridges["room-010"]?.online == false && site.bridges["room-002"]?.wearer == "Margaret")

        fold(&site, "fallguard/room-010/state", "countdown", at: 110)
        fold(&site, "fallguard/room-002/state", "alert-out", at: 105)
        fold(&site, "fallguard/room-002/incident", #"{"incident":"FG-4","kind":"fall","severity":"alarm","at":"2026-11-26T10:00:00Z","delivered":true,"reached-by":"Ben"}"#, at: 106)
        fold(&site, "fallguard/room-001/alert", #"{"wearer":{"name":"Albert","location":""},"alert":{"kind":"heartbeat","incident":"FG-hb"},"message":{"body":"ok"}}"#, at: 107)
        #expect(site.openAlarms.map(\.device) == ["room-002", "room-010"], "the oldest alarm first")
        #expect(site.ordered.map(\.device) == ["room-002", "room-010", "room-001"])
        let open = site.bridges["room-002"]!
        #expect(open.alarmSince == 105 && open.incident?.delivered == true && open.incident?.reachedBy == "Ben" && open.incident?.acknowledgedBy == nil)
        #expect(site.bridges["room-001"]?.wearer == "Albert" && site.bridges["room-001"]?.lastHeartbeat == 107)

        fold(&site, "fallguard/room-002/incident", #"{"incident":"FG-4","kind":"acknowledged","severity":"information","at":"2026-11-26T10:01:00Z","acknowledged-by":"Anna Smith (station)"}"#, at: 120)
        #expect(site.openAlarms.map(\.device) == ["room-010"], "an answered alarm is no longer open")
        #expect(site.bridges["room-002"]?.incident?.acknowledgedBy == "Anna Smith (station)")
        fold(&site, "fallguard/room-010/state", "monitoring", at: 121)
        #expect(site.openAlarms.isEmpty && site.bridges["room-010"]?.alarmSince == nil)
        // Malformed payloads change nothing.
        fold(&site, "fallguard/room-001/incident", "not json", at: 130)
        #expect(site.bridges["room-001"]?.incident == nil)
        // Not worn (issue 26's retained topic), and worn again.
        fold(&site, "fallguard/room-001/worn", "not-worn", at: 131)
        #expect(site.bridges["room-001"]?.worn == false && site.bridges["room-002"]?.worn == nil)
        let json = StationPage.json(site, me: "Anna Smith", broker: "b", now: 130)
        #expect(json.contains(#""me":"Anna Smith""#) && json.contains(#""device":"room-002""#) && json.contains(#""worn":false"#))
        fold(&site, "fallguard/room-001/worn", "worn", at: 132)
        #expect(site.bridges["room-001"]?.worn == true)
    }

    @Test func eachMemberOfStaffHasTheirOwnLoginAndSessions() {
        let staff = StaffAccess(staff: [("anna", "Anna Smith", "anna-password"), ("bob", "Bob Jones", "bob-password")], sessionHours: 1)
        #expect(staff.check(user: "anna", password: "bob-password", client: "a", now: 0).0 == .wrong)
        #expect(staff.check(user: "carol", password: "anna-password", client: "a", now: 0).0 == .wrong, "no such user")
        let (right, anna) = staff.check(user: "Anna", password: "anna-password", client: "a", now: 0)
        #expect(right == .right && anna?.name == "Anna Smith")
        let (_, bob) = staff.check(user: "bob", password: "bob-password", client: "b", now: 0)
        let s1 = staff.startSession(for: anna!, now: 0), s2 = staff.startSession(for: bob!, now: 0)
        #expect(staff.member(session: s1, now: 1)?.name == "Anna Smith" && staff.member(session: s2, now: 1)?.name == "Bob Jones")
        #expect(staff.member(session: "forged", now: 1) == nil && staff.member(session: s1, now: 4000) == nil, "expired")
        let t1 = staff.formToken(session: s1, now: 1)
        #expect(t1 != nil && staff.acceptsForm(token: t1, session: s1, now: 1) && !staff.acceptsForm(token: t1, session: s2, now: 1))
        staff.logout(session: s1)
        #expect(staff.member(session: s1, now: 1) == nil)
        for _ in 0..<WebAccess.throttleLimit { _ = staff.check(user: "bob", password: "x", client: "c", now: 10) }
        if case .throttled = staff.check(user: "bob", password: "bob-password", client: "c", now: 11).0 {} else {
            Issue.record("wrong passwords are throttled per client")
        }
        #expect(staff.acceptsHost("127.0.0.1:80", loopbackOnly: true) && !staff.acceptsHost("127.attacker.example", loopbackOnly: true))
    }

    @Test func anAcknowledgementFromTheStationIsTakenOnlyByItsBridge() throws {
        let secret = "one-secret-for-the-home-0123"
        let payload = MQTTSiteClient.acknowledgement(device: "room-002", incident: "FG-1", by: "Anna Smith", secret: secret, time: 1_800_000_000)
        let ack = try MQTTAcknowledgement(payload: payload)
        let now = Date(timeIntervalSince1970: 1_800_000_010)
        #expect(try MQTTAcknowledgementGate(device: "room-002", secret: secret).incident(of: ack, now: now).get() == "FG-1")
        #expect(ack.by == "Anna Smith")
        if case .success = MQTTAcknowledgementGate(device: "room-003", secret: secret).incident(of: ack, now: now) {
            Issue.record("another bridge with the same secret and incident id took it")
        }
    }

    @Test func theStationsFileIsCheckedWithFileAndLine() throws {
        let folder = temporaryFolder("station-config")
        let path = folder + "/station.yaml"
        try """
            station:
              broker: {host: broker.example, username: station, password: pw}
              listen: 0.0.0.0:8470
              acknowledge-secret: short
              staff:
                - {user: anna, name: Anna Smith, password: pw}
                - {user: Anna, name: Anna Again, password: another-password}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let (_, diagnostics) = StationConfiguration.load(path: path)
        let said = diagnostics.filter(\.isError).map(\.description)
        for expected in ["station.broker.tls", "station.tls-certificate", "station.yaml:4: station.acknowledge-secret",
                         "station.yaml:6: station.staff.0.password", "station.yaml:7: station.staff.1.user"] {
            #expect(said.contains { $0.contains(expected) }, "\(expected) in \(said)")
        }
        try """
            station:
              broker: {host: 127.0.0.1}
              acknowledge-secret: one-secret-for-the-home-0123
              staff: [{user: anna, name: Anna Smith, password: anna-password}]
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let (good, fine) = StationConfiguration.load(path: path)
        #expect(!fine.contains { $0.isError }, "\(fine)")
        #expect(good.station.address?.port == 8470 && good.station.secret(for: "room-1") == "one-secret-for-the-home-0123")
    }

    /// bench/station.sh's check, at 50 bridges, on the built `fallguard`: 401 without a login,
    /// the alarm on screen within 2 s, acknowledged in one click, the name on the bridge.
    @Test(.enabled(if: mosquittoMissing == nil, "\(mosquittoMissing ?? "")"))
    func theStationPageInChromiumShowsANewAlarmAndAcknowledgesItByName() throws {
        guard WebPageTests.chromium != nil else {
            Issue.record("chromium is not installed: tools/setup-debian installs it")
            return
        }
        let out = temporaryFolder("station")
        let r = try runCommand("/usr/bin/python3", [repositoryRoot + "/bench/station_check.py"],
                               environment: ["BRIDGES": "50", "OUT": out, "FALLGUARD": fallguardBinary])
        #expect(r.status == 0 && r.stdout.contains(" passed, 0 failed"), "\(r.stdout)\n\(r.stderr)")
    }
}
