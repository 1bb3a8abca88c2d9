import FallGuardCore
import Testing
import FallGuardTestSupport

@Suite struct AlertSensorFaultTests {
    @Test func aFaultThatRecoversWithinTheGracePeriodIsNotReported() throws {
        var e = AlertFixtures.engine()
        let start = e.handle(.sensorFault(AlertFixtures.fault), at: 0)
        let event = try #require(start.events.first)
        #expect(start.events.count == 1 && event.event == .sensorFault && event.incident == "FG-fault-1")
        #expect(event.detail.contains("iio:device0 (adxl345): io-error (EIO)"))
        #expect(start.sounds == [.sensorFault] && start.indicators == [.fault])
        #expect(e.sensorFault?.reportDeadline == 60 && e.nextDeadline == 60)

        let end = e.handle(.sensorRecovered, at: 59)
        #expect(end.alerts.isEmpty)
        #expect(end.events.map(\.event) == [.sensorRecovered] && end.events.first?.alert == nil)
        #expect(end.sounds == [.silent] && end.indicators == [.monitoring])
        #expect(e.sensorFault == nil && e.nextDeadline == nil)
        #expect(e.advance(to: 1000).isEmpty)
    }

    @Test func aFaultLastingTheGracePeriodIsReportedOnceThenRecovers() throws {
        var e = AlertFixtures.engine()
        _ = e.handle(.sensorFault(AlertFixtures.fault), at: 0)
        #expect(e.advance(to: 59.999).isEmpty)
        let report = e.advance(to: 60)
        let problem = try #require(report.alerts.first)
        #expect(report.alerts.count == 1 && problem.kind == .deviceProblem && problem.severity == .warning)
        #expect(problem.incident == "FG-fault-1" && problem.time == 60 && problem.sensorFault == AlertFixtures.fault)
        #expect(report.events.map(\.event) == [.deviceProblem] && report.sounds.isEmpty)
        #expect(e.advance(to: 500).isEmpty, "reported once")

        let other = SensorFault(.stalled, device: "iio:device0 (adxl345)")
        let again = e.handle(.sensorFault(other), at: 550)
        #expect(again.events.map(\.event) == [.sensorFault] && again.alerts.isEmpty && again.sounds.isEmpty)
        #expect(e.sensorFault?.since == 0 && e.sensorFault?.fault == other)

        let back = e.handle(.sensorRecovered, at: 600)
        let recovered = try #require(back.alerts.first)
        #expect(back.alerts.count == 1 && recovered.kind == .deviceRecovered && recovered.severity == .information)
        #expect(recovered.incident == "FG-fault-1" && recovered.time == 600)
        #expect(back.events.map(\.event) == [.sensorRecovered] && back.events.first?.alert == .deviceRecovered)
        #expect(back.sounds == [.silent] && back.indicators == [.monitoring])
    }

    @Test func anIncidentsSoundTakesPrecedenceOverTheFaultSound() {
        var e = AlertFixtures.counting(from: 0)
        let fault = e.handle(.sensorFault(AlertFixtures.fault), at: 5)
        #expect(fault.sounds.isEmpty, "the countdown keeps sounding")
        #expect(fault.indicators == [.fault])
        let out = e.advance(to: 30)
        #expect(out.alerts.map(\.kind) == [.fall])
        #expect(out.sounds == [.countdownFinal, .alertActive] && out.indicators.isEmpty, "the LED stays on fault")
        // Recovery restores what the current state calls for, not what was showing at the fault.
        let back = e.handle(.sensorRecovered, at: 40)
        #expect(back.indicators == [.alertOut] && back.sounds.isEmpty && back.alerts.isEmpty)
    }

    @Test func afterAnIncidentDuringAFaultTheFaultSoundReturns() {
        var e = AlertFixtures.engine()
        _ = e.handle(.sensorFault(AlertFixtures.fault), at: 0)
        let fall = e.handle(.fallSuspected(AlertFixtures.fall()), at: 10)
        #expect(fall.sounds == [.countdown] && fall.indicators.isEmpty && fall.events.first?.incident == "FG-1")
        _ = e.handle(.buttonPressed, at: 15)
        let abort = e.handle(.buttonReleased, at: 15.2)
        #expect(abort.sounds == [.acknowledge, .sensorFault] && abort.indicators.isEmpty)
        #expect(e.state == .monitoring && e.sensorFault != nil)
    }

    @Test func aRecoveryWithoutAFaultDoesNothing() {
        var e = AlertFixtures.engine()
        #expect(e.handle(.sensorRecovered, at: 1).isEmpty)
    }

    @Test func aZeroGracePeriodReportsAtOnce() throws {
        var e = AlertFixtures.engine(try AlertConfiguration.testing(faultGrace: 0))
        let fx = e.handle(.sensorFault(AlertFixtures.fault), at: 7)
        #expect(fx.alerts.map(\.kind) == [.deviceProblem] && fx.alerts.first?.time == 7)
        #expect(fx.events.map(\.event) == [.sensorFault, .deviceProblem])
    }

    @Test func faultEpisodesHaveTheirOwnNumbers() {
        var e = AlertFixtures.engine()
        _ = e.handle(.sensorFault(AlertFixtures.fault), at: 0)
        _ = e.handle(.sensorRecovered, at: 1)
        let second = e.handle(.sensorFault(AlertFixtures.fault), at: 2)
        #expect(second.events.first?.incident == "FG-fault-2")
        let fall = e.handle(.fallSuspected(AlertFixtures.fall()), at: 3)
        #expect(fall.events.first?.incident == "FG-1", "faults do not use up fall incident numbers")
    }
}

/// Alerts that may not reach anyone: the engine shows it on the LED as an effect (the
/// controller performs `.indicator` effects only), in place of the heartbeat, never over an
/// incident's pattern, and silently (the buzzer is the wearer's, not the device's).
@Suite struct AlertDeliveryTroubleTests {
    @Test func troubleReplacesTheHeartbeatAndEndsWithIt() {
        var e = AlertFixtures.engine()
        let start = e.handle(.deliveryTrouble(true), at: 1)
        #expect(start.indicators == [.fault] && start.sounds.isEmpty && start.events.isEmpty && start.alerts.isEmpty)
        #expect(e.indicator == .fault && e.status == .monitoring, "the state shown elsewhere stays monitoring")
        #expect(e.handle(.deliveryTrouble(true), at: 2).isEmpty, "no effect without a change")
        let end = e.handle(.deliveryTrouble(false), at: 3)
        #expect(end.indicators == [.monitoring] && e.indicator == .monitoring)
    }

    @Test func anIncidentsPatternWinsOverTroubleAndTheFaultComesBackAfterIt() {
        var e = AlertFixtures.engine()
        _ = e.handle(.deliveryTrouble(true), at: 1)
        let fall = e.handle(.fallSuspected(AlertFixtures.fall(impact: 2)), at: 2)
        #expect(fall.indicators == [.countdown], "the countdown's fast blink, not the fault")
        _ = e.handle(.buttonPressed, at: 3)
        let abort = e.handle(.buttonReleased, at: 3.2)
        #expect(abort.indicators == [.fault], "back to monitoring: the trouble shows again")
    }
}

/// A device nobody wears: the wear watch's verdict opens an episode numbered with the faults;
/// the helpers are told once it lasts `notWornAlert` from when the stillness began, and told
/// again when it is worn; with the alert off only the log and the status say it.
@Suite struct AlertNotWornTests {
    static func engine(alert: Double?) throws -> AlertEngine {
        AlertEngine(configuration: try AlertConfiguration(countdown: 30, longPress: 2, finalPhase: 10, alertTimeout: 3600,
                                                          faultGrace: 60, autoCancelWhenWalking: false,
                                                          incidentPrefix: "FG", notWornAlert: alert))
    }

    @Test func notWornForTheConfiguredTimeIsToldAndWearingItAgainToo() throws {
        var e = try Self.engine(alert: 1800)
        let verdict = e.handle(.notWorn(since: 100), at: 1000)   // a 15-minute verdict
        #expect(verdict.events.map(\.event) == [.notWorn] && verdict.alerts.isEmpty && verdict.sounds.isEmpty)
        #expect(e.notWorn?.incident == "FG-fault-1" && e.notWorn?.reportDeadline == 1900 && e.nextDeadline == 1900)
        #expect(e.status == .monitoring && e.indicator == .monitoring, "falls are still watched for; nothing sounds")
        #expect(e.advance(to: 1899).isEmpty)
        let told = e.advance(to: 1900)
        let alert = try #require(told.alerts.first)
        #expect(told.alerts.count == 1 && alert.kind == .deviceProblem && alert.sensorFault?.problem == .notWorn)
        #expect(alert.sensorFault?.detail == "only the sensor's own noise for 30 min", "\(String(describing: alert.sensorFault))")
        #expect(e.advance(to: 5000).isEmpty, "told once")
        let worn = e.handle(.wornAgain, at: 5000)
        #expect(worn.alerts.map(\.kind) == [.deviceRecovered] && worn.alerts.first?.incident == "FG-fault-1")
        #expect(e.notWorn == nil)
        #expect(e.handle(.wornAgain, at: 5001).isEmpty, "nothing to end twice")
    }

    @Test func withTheAlertOffOnlyTheLogSaysIt() throws {
        var e = try Self.engine(alert: nil)
        #expect(e.handle(.notWorn(since: 100), at: 1000).events.map(\.event) == [.notWorn])
        #expect(e.nextDeadline == nil && e.advance(to: 100_000).isEmpty)
        let worn = e.handle(.wornAgain, at: 100_000)
        #expect(worn.alerts.isEmpty && worn.events.map(\.event) == [.wornAgain])
    }

    @Test func aFallWhileNotWornStillCountsDown() throws {
        var e = try Self.engine(alert: 1800)
        _ = e.handle(.notWorn(since: 100), at: 1000)
        let fall = e.handle(.fallSuspected(AlertFixtures.fall(impact: 1100)), at: 1100)
        #expect(fall.sounds == [.countdown] && e.status == .countdown)
        #expect(throws: AlertConfigurationError.self) { try Self.engine(alert: 30) }
    }
}
