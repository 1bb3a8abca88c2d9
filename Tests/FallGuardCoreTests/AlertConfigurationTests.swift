import FallGuardCore
import Testing
import Foundation
import FallGuardTestSupport

@Suite struct AlertConfigurationTests {
    @Test(arguments: [4.0, 301.0, -1, .nan, .infinity])
    func aCountdownOutside5To300IsRejectedByName(countdown: Double) {
        let error = #expect(throws: AlertConfigurationError.self) { try AlertConfiguration.testing(countdown: countdown) }
        #expect(error?.setting == .countdown)
        #expect(error?.description.contains("'countdown'") == true)
        #expect(error?.description.contains("outside 5.0...300.0 s") == true)
    }

    @Test(arguments: [5.0, 300.0])
    func theCountdownBoundsAreAllowed(countdown: Double) throws {
        #expect(try AlertConfiguration.testing(countdown: countdown, finalPhase: 5).countdown == countdown)
    }

    @Test func everyOtherSettingIsCheckedAndNamed() {
        func key(_ make: () throws -> AlertConfiguration) -> AlertConfiguration.Setting? {
            do { _ = try make(); return nil } catch { return (error as? AlertConfigurationError)?.setting }
        }
        #expect(key { try AlertConfiguration.testing(longPress: 0.1) } == .longPress)
        #expect(key { try AlertConfiguration.testing(countdown: 20, finalPhase: 21) } == .finalPhase)
        #expect(key { try AlertConfiguration.testing(finalPhase: -1) } == .finalPhase)
        #expect(key { try AlertConfiguration.testing(alertTimeout: 10) } == .alertTimeout)
        #expect(key { try AlertConfiguration.testing(faultGrace: -1) } == .faultGrace)
        #expect(key { try AlertConfiguration.testing(faultGrace: 4000) } == .faultGrace)
        for bad in ["", "F G", "a/b", "Grüße", String(repeating: "x", count: 33)] {
            #expect(key { try AlertConfiguration.testing(incidentPrefix: bad) } == .incidentPrefix, "\(bad)")
        }
        #expect(key { try AlertConfiguration.testing(longPress: 0.5, finalPhase: 0, incidentPrefix: "oma_2-b") } == nil)
    }

    @Test func thePrefixNamesTheIncidents() throws {
        var e = AlertEngine(configuration: try AlertConfiguration.testing(incidentPrefix: "Oma"))
        #expect(e.handle(.fallSuspected(AlertFixtures.fall()), at: 0).events.first?.incident == "Oma-1")
        #expect(e.handle(.sensorFault(AlertFixtures.fault), at: 1).events.first?.incident == "Oma-fault-1")
    }

    @Test func theTimingsDriveTheEngine() throws {
        var e = AlertEngine(configuration: try AlertConfiguration.testing(countdown: 12, longPress: 1, finalPhase: 4, alertTimeout: 60))
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 100)
        #expect(e.nextDeadline == 108)
        _ = e.advance(to: 108)
        #expect(e.nextDeadline == 112)
        _ = e.advance(to: 112)
        #expect(e.nextDeadline == 172)
        _ = e.handle(.buttonPressed, at: 120)
        #expect(e.nextDeadline == 121)
    }

    @Test func aZeroFinalPhaseHasNone() throws {
        var e = AlertEngine(configuration: try AlertConfiguration.testing(finalPhase: 0))
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 0)
        #expect(e.nextDeadline == 30)
        let fx = e.advance(to: 30)
        #expect(fx.events.map(\.event) == [.countdownExpired] && fx.sounds == [.alertActive])
    }

    @Test func aFinalPhaseAsLongAsTheCountdownStartsFinal() throws {
        var e = AlertEngine(configuration: try AlertConfiguration.testing(countdown: 10, finalPhase: 10))
        let fx = e.handle(.fallSuspected(AlertFixtures.fall()), at: 0)
        #expect(fx.sounds == [.countdownFinal] && e.nextDeadline == 10)
        #expect(e.advance(to: 10).events.map(\.event) == [.countdownExpired])
    }
}

@Suite struct AlertCodingTests {
    @Test func severityFollowsTheKind() {
        let expected: [AlertKind: AlertSeverity] = [
            .fall: .alarm, .helpRequested: .alarm, .deviceProblem: .warning,
            .resolvedByWearer: .information, .acknowledged: .information, .deviceRecovered: .information,
            .heartbeat: .information, .recoveredFall: .information,
        ]
        for kind in AlertKind.allCases {
            #expect(kind.severity == expected[kind], "\(kind)")
            #expect(Alert(kind: kind, incident: "FG-1", time: 0).severity == expected[kind])
        }
    }

    @Test func anAlertRoundTripsThroughJSON() throws {
        let alert = Alert(kind: .fall, incident: "FG-3", time: 1234.5, fall: AlertFixtures.fall(impact: 1200),
                          wearerResumedWalking: true)
        let json = try JSONEncoder().encode(alert)
        let text = try #require(String(data: json, encoding: .utf8))
        #expect(text.contains("\"severity\":\"alarm\"") && text.contains("\"kind\":\"fall\""))
        #expect(text.contains("\"impactTime\":1200"))
        #expect(try JSONDecoder().decode(Alert.self, from: json) == alert)
    }

    @Test func anIncidentEventIsOneJSONObjectWithTheLogFields() throws {
        var e = AlertFixtures.counting(from: 0)
        _ = e.handle(.buttonPressed, at: 3)
        let event = try #require(e.handle(.buttonReleased, at: 3.5).events.first)
        let json = try JSONEncoder().encode(event)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(Set(object.keys) == ["time", "incident", "event", "detail", "fall"])
        #expect(object["event"] as? String == "false-alarm" && object["incident"] as? String == "FG-1")
        #expect(try JSONDecoder().decode(IncidentEvent.self, from: json) == event)

        var idle = AlertFixtures.engine()
        _ = idle.handle(.buttonPressed, at: 1)
        let ignored = try #require(idle.handle(.buttonReleased, at: 1.1).events.first)
        let keys = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(ignored)) as? [String: Any]).keys
        #expect(Set(keys) == ["time", "event", "detail"], "nil fields are left out")
    }
}
