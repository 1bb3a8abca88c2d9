import FallGuardCore
import Testing
import FallGuardTestSupport

/// Fixtures shared by the Alert* test files.
enum AlertFixtures {
    static func fall(impact: Double = 0, peak: Double = 5.2) -> FallSuspected {
        FallSuspected(detector: "multiphase", impactTime: impact, decisionTime: impact + 2.5, peak: peak,
                      phases: ["impact", "posture-change", "stillness"],
                      features: [DetectionFeature("peak", peak, "g"), DetectionFeature("posture-change", 85, "deg")])
    }

    static let fault = SensorFault(.ioError, device: "iio:device0 (adxl345)", detail: "EIO")

    static func engine(_ configuration: AlertConfiguration = .standard) -> AlertEngine {
        AlertEngine(configuration: configuration)
    }

    /// A fall at `t`, with the countdown already running.
    static func counting(from t: Double = 0, _ configuration: AlertConfiguration = .standard) -> AlertEngine {
        var e = engine(configuration)
        _ = e.handle(.fallSuspected(fall(impact: t - 2.5)), at: t)
        return e
    }

    /// A fall at 0 whose alert went out at 30.
    static func alertOut() -> AlertEngine {
        var e = counting(from: 0)
        _ = e.advance(to: 30)
        return e
    }
}

extension Array where Element == AlertEffect {
    var alerts: [Alert] { compactMap { guard case let .dispatch(a) = $0 else { return nil }; return a } }
    var events: [IncidentEvent] { compactMap { guard case let .record(r) = $0 else { return nil }; return r } }
    var sounds: [AlarmSound] { compactMap { guard case let .sound(s) = $0 else { return nil }; return s } }
    var indicators: [StatusIndicator] { compactMap { guard case let .indicator(i) = $0 else { return nil }; return i } }
    var armed: [Alert] { compactMap { guard case let .arm(a, _) = $0 else { return nil }; return a } }
    var disarmed: [String] { compactMap { guard case let .disarm(i, _) = $0 else { return nil }; return i } }
}

extension AlertState {
    var countdown: Countdown? { guard case let .countdown(c) = self else { return nil }; return c }
    var active: Active? { guard case let .alertActive(a) = self else { return nil }; return a }
}

@Suite struct AlertEngineCountdownTests {
    @Test func aFallStartsTheCountdown() throws {
        var e = AlertFixtures.engine()
        #expect(e.sound == .silent && e.indicator == .monitoring && e.nextDeadline == nil)
        let fall = AlertFixtures.fall()
        let fx = e.handle(.fallSuspected(fall), at: 0)
        #expect(fx.count == 4)
        #expect(fx.armed == [Alert(kind: .fall, incident: "FG-1", time: 30, fall: fall)] && e.armedIncident == "FG-1",
                "the fall alert is armed for the countdown's end")
        #expect(e.status == .countdown)
        let event = try #require(fx.events.first)
        #expect(event == IncidentEvent(time: 0, incident: "FG-1", event: .fallSuspected, detail: event.detail, fall: fall))
        #expect(event.detail.contains("alert in 30 s"))
        #expect(fx.sounds == [.countdown] && fx.indicators == [.countdown] && fx.alerts.isEmpty)
        let c = try #require(e.state.countdown)
        #expect(c.incident == "FG-1" && c.started == 0 && c.deadline == 30 && c.finalPhaseStart == 20)
        #expect(c.remaining(at: 12) == 18 && c.remaining(at: 45) == 0)
        #expect(e.nextDeadline == 20)
    }

    @Test func theFinalPhaseStartsTenSecondsBeforeTheDeadline() throws {
        var e = AlertFixtures.counting(from: 0)
        #expect(e.advance(to: 19.999).isEmpty)
        let fx = e.advance(to: 20)
        #expect(fx.events.map(\.event) == [.finalPhase] && fx.events.first?.time == 20)
        #expect(fx.sounds == [.countdownFinal] && fx.indicators.isEmpty)
        #expect(try #require(e.state.countdown).inFinalPhase)
        #expect(e.nextDeadline == 30)
    }

    @Test func aShortPressAt29_9AbortsAsAFalseAlarm() throws {
        var e = AlertFixtures.counting(from: 0)
        // No advance since the fall: the press's own advance fires the final phase, dated 20.
        let pressed = e.handle(.buttonPressed, at: 29.8)
        #expect(pressed.events.map(\.event) == [.finalPhase] && pressed.events.first?.time == 20)
        let fx = e.handle(.buttonReleased, at: 29.9)
        #expect(fx.alerts.isEmpty)
        let event = try #require(fx.events.first)
        #expect(fx.events.count == 1 && event.event == .falseAlarm && event.incident == "FG-1" && event.time == 29.9)
        #expect(event.fall == AlertFixtures.fall(impact: -2.5), "a false alarm keeps the detector's reasons")
        #expect(fx.sounds == [.acknowledge, .silent] && fx.indicators == [.monitoring])
        #expect(e.state == .monitoring && e.nextDeadline == nil)
        #expect(e.advance(to: 100).isEmpty, "nothing goes out later")
    }

    @Test func theAlertGoesOutAtExactly30Seconds() throws {
        var e = AlertFixtures.counting(from: 0)
        #expect(e.advance(to: 29.999).alerts.isEmpty)
        let fx = e.advance(to: 30.0)
        #expect(fx.alerts == [Alert(kind: .fall, incident: "FG-1", time: 30, fall: AlertFixtures.fall(impact: -2.5))])
        #expect(fx.alerts.first?.severity == .alarm && fx.alerts.first?.wearerResumedWalking == false)
        #expect(fx.events.map(\.event) == [.countdownExpired] && fx.events.first?.alert == .fall)
        #expect(fx.first == .dispatch(fx.alerts[0]), "the dispatch comes first")
        #expect(fx.sounds == [.alertActive] && fx.indicators == [.alertOut])
        let a = try #require(e.state.active)
        #expect(a.incident == "FG-1" && a.kind == .fall && a.dispatchedAt == 30 && a.timeoutDeadline == 3630)
        #expect(e.nextDeadline == 3630)
    }

    @Test func aLateAdvanceFiresEveryTimerInOrderAtItsOwnTime() {
        var e = AlertFixtures.counting(from: 0)
        let fx = e.advance(to: 100)
        #expect(fx.events.map(\.event) == [.finalPhase, .countdownExpired])
        #expect(fx.events.map(\.time) == [20, 30])
        #expect(fx.sounds == [.countdownFinal, .alertActive])
        #expect(fx.alerts.map(\.time) == [30])
        #expect(e.clock == 100)
    }

    @Test func handleAdvancesBeforeApplyingTheInput() throws {
        var e = AlertFixtures.counting(from: 0)
        // An acknowledgement at 31 can only match because the alert went out at 30 first.
        let fx = e.handle(.acknowledged(incidentID: "FG-1", by: "alice"), at: 31)
        #expect(fx.alerts.map(\.kind) == [.fall, .acknowledged])
        #expect(fx.events.map(\.event) == [.finalPhase, .countdownExpired, .acknowledged])
        #expect(e.state == .monitoring)
    }

    @Test func repeatedDetectionsDoNotRestartTheCountdown() throws {
        var e = AlertFixtures.counting(from: 0)
        let second = AlertFixtures.fall(impact: 22, peak: 3.1)
        let fx = e.handle(.fallSuspected(second), at: 25)
        #expect(fx.events.map(\.event) == [.finalPhase, .repeatDetection])
        #expect(fx.events.last?.incident == "FG-1" && fx.events.last?.fall == second)
        #expect(e.nextDeadline == 30 && e.state.countdown?.deadline == 30)
        let out = e.advance(to: 30)
        #expect(out.alerts.count == 1 && out.alerts.first?.time == 30)
        #expect(out.alerts.first?.fall == AlertFixtures.fall(impact: -2.5), "the alert carries the first detection")

        let again = e.handle(.fallSuspected(second), at: 40)
        #expect(again.events.map(\.event) == [.repeatDetection] && again.events.first?.incident == "FG-1")
        #expect(again.alerts.isEmpty && again.sounds.isEmpty)
        #expect(e.nextDeadline == 3630, "the active timeout does not restart either")
    }

    @Test func aFallAfterTheIncidentIsResolvedIsANewIncident() throws {
        var e = AlertFixtures.counting(from: 0)
        _ = e.handle(.buttonPressed, at: 5)
        _ = e.handle(.buttonReleased, at: 5.2)
        let second = e.handle(.fallSuspected(AlertFixtures.fall(impact: 97.5)), at: 100)
        #expect(second.events.first?.incident == "FG-2")
        _ = e.advance(to: 130)
        _ = e.handle(.acknowledged(incidentID: "FG-2", by: "alice"), at: 140)
        let third = e.handle(.fallSuspected(AlertFixtures.fall(impact: 197.5)), at: 200)
        #expect(third.events.first?.incident == "FG-3" && e.state.incident == "FG-3")
    }

    @Test func walkingIsNotedInTheAlert() throws {
        var e = AlertFixtures.counting(from: 0)
        let walk = e.handle(.wearerActivity(walking: true), at: 8)
        #expect(walk.events.map(\.event) == [.wearerWalking] && walk.events.first?.incident == "FG-1")
        #expect(walk.sounds.isEmpty && walk.alerts.isEmpty)
        let still = e.handle(.wearerActivity(walking: false), at: 9)
        #expect(still.events.map(\.event) == [.wearerStill])
        #expect(e.state.countdown?.wearerResumedWalking == true, "stopping again does not erase the note")
        let fx = e.advance(to: 30)
        #expect(fx.alerts.count == 1 && fx.alerts.first?.wearerResumedWalking == true)
        #expect(fx.events.last?.detail.contains("walked") == true)
    }

    @Test func walkingCancelsTheCountdownWhenConfigured() throws {
        var e = AlertFixtures.counting(from: 0, try AlertConfiguration.testing(autoCancelWhenWalking: true))
        let fx = e.handle(.wearerActivity(walking: true), at: 8)
        #expect(fx.events.map(\.event) == [.autoCancelled] && fx.events.first?.fall != nil)
        #expect(fx.sounds == [.acknowledge, .silent] && fx.indicators == [.monitoring])
        #expect(e.state == .monitoring)
        #expect(e.advance(to: 100).isEmpty, "no alert goes out")
    }

    @Test func walkingHintsOutsideACountdownAreIgnored() {
        var e = AlertFixtures.engine()
        #expect(e.handle(.wearerActivity(walking: true), at: 1).isEmpty)
        var out = AlertFixtures.alertOut()
        #expect(out.handle(.wearerActivity(walking: true), at: 40).isEmpty)
        #expect(out.state.active?.wearerResumedWalking == false)
    }
}

@Suite struct AlertEngineButtonTests {
    @Test func aPressReleasedAt1_99IsAShortPressAndAborts() {
        var e = AlertFixtures.counting(from: 0)
        #expect(e.handle(.buttonPressed, at: 10).isEmpty)
        #expect(e.nextDeadline == 12, "the long-press threshold is the next deadline")
        let fx = e.handle(.buttonReleased, at: 11.99)
        #expect(fx.events.map(\.event) == [.falseAlarm] && fx.alerts.isEmpty)
        #expect(e.state == .monitoring)
    }

    @Test func aPressHeld2SecondsRequestsHelpAtTheThreshold() throws {
        var e = AlertFixtures.counting(from: 0)
        _ = e.handle(.buttonPressed, at: 10)
        #expect(e.advance(to: 11.999).isEmpty)
        let fx = e.advance(to: 12.0)
        let help = Alert(kind: .helpRequested, incident: "FG-1", time: 12, fall: AlertFixtures.fall(impact: -2.5))
        #expect(fx.alerts == [help] && help.severity == .alarm)
        #expect(fx.events.map(\.event) == [.helpRequested] && fx.events.first?.alert == .helpRequested)
        #expect(fx.sounds == [.helpRequested, .alertActive] && fx.indicators == [.alertOut])
        let a = try #require(e.state.active)
        #expect(a.kind == .helpRequested && a.incident == "FG-1" && a.timeoutDeadline == 3612)
        #expect(e.handle(.buttonReleased, at: 13).isEmpty, "the release does nothing more")
        #expect(e.advance(to: 40).isEmpty, "the help request replaced the countdown: no fall alert at 30")
    }

    @Test func aReleaseExactlyAtTheThresholdIsALongPress() {
        var e = AlertFixtures.counting(from: 0)
        _ = e.handle(.buttonPressed, at: 10)
        let fx = e.handle(.buttonReleased, at: 12.0)
        #expect(fx.alerts.map(\.kind) == [.helpRequested])
        #expect(!fx.events.contains { $0.event == .falseAlarm })
    }

    @Test func aPressHeldAcrossTheDeadlineHoldsTheFallAlert() {
        var abort = AlertFixtures.counting(from: 0)
        _ = abort.handle(.buttonPressed, at: 29.5)
        #expect(abort.advance(to: 30.5).alerts.isEmpty, "the press decides within 2 s")
        #expect(abort.nextDeadline == 31.5)
        let fx = abort.handle(.buttonReleased, at: 30.6)
        #expect(fx.events.map(\.event) == [.falseAlarm] && fx.alerts.isEmpty)

        var help = AlertFixtures.counting(from: 0)
        _ = help.handle(.buttonPressed, at: 29.5)
        let held = help.advance(to: 31.5)
        #expect(held.alerts.map(\.kind) == [.helpRequested] && held.alerts.first?.time == 31.5)
    }

    @Test func aLongPressWhileMonitoringOpensAnIncident() throws {
        var e = AlertFixtures.engine()
        _ = e.handle(.buttonPressed, at: 100)
        let fx = e.advance(to: 102)
        #expect(fx.alerts == [Alert(kind: .helpRequested, incident: "FG-1", time: 102)])
        #expect(fx.alerts.first?.fall == nil)
        #expect(e.state.active?.kind == .helpRequested)
        #expect(e.handle(.buttonReleased, at: 104).isEmpty)
        // A second press is "I'm OK" for that incident.
        _ = e.handle(.buttonPressed, at: 200)
        let ok = e.handle(.buttonReleased, at: 200.3)
        #expect(ok.alerts.map(\.kind) == [.resolvedByWearer] && ok.alerts.first?.incident == "FG-1")
    }

    @Test func aLongPressWhileTheAlertIsOutRequestsHelpAgain() throws {
        var e = AlertFixtures.alertOut()
        _ = e.handle(.buttonPressed, at: 100)
        let fx = e.advance(to: 102)
        #expect(fx.alerts.map(\.kind) == [.helpRequested] && fx.alerts.first?.incident == "FG-1")
        #expect(fx.alerts.first?.fall != nil, "still the fall's incident")
        #expect(fx.sounds == [.helpRequested, .alertActive] && fx.indicators.isEmpty)
        #expect(e.nextDeadline == 3702, "the active timeout restarts")
    }

    @Test func imOKAfterTheAlertResolvesIt() throws {
        var e = AlertFixtures.alertOut()
        _ = e.handle(.buttonPressed, at: 40)
        let fx = e.handle(.buttonReleased, at: 40.2)
        let alert = try #require(fx.alerts.first)
        #expect(fx.alerts.count == 1 && alert.kind == .resolvedByWearer && alert.incident == "FG-1")
        #expect(alert.severity == .information && alert.time == 40.2 && alert.fall != nil)
        #expect(fx.events.map(\.event) == [.resolvedByWearer])
        #expect(fx.sounds == [.acknowledge, .silent] && fx.indicators == [.monitoring])
        #expect(e.state == .monitoring && e.nextDeadline == nil)
    }

    @Test func aPressWithNoIncidentIsIgnoredAndRecorded() throws {
        var e = AlertFixtures.engine()
        _ = e.handle(.buttonPressed, at: 5)
        let fx = e.handle(.buttonReleased, at: 5.2)
        #expect(fx.count == 1)
        let event = try #require(fx.events.first)
        #expect(event.event == .pressIgnored && event.incident == nil && event.time == 5.2)
        #expect(event.detail.contains("no incident"))
        #expect(e.state == .monitoring && e.nextDeadline == nil)
    }

    @Test func aPressActsOnlyOnTheIncidentItBeganIn() {
        // Pressed while monitoring, a fall is detected during the press: the release must not abort it.
        var e = AlertFixtures.engine()
        _ = e.handle(.buttonPressed, at: 10)
        _ = e.handle(.fallSuspected(AlertFixtures.fall(impact: 8)), at: 10.5)
        let fx = e.handle(.buttonReleased, at: 11)
        #expect(fx.events.map(\.event) == [.pressIgnored] && fx.events.first?.incident == nil)
        #expect(e.state.countdown?.incident == "FG-1")
    }

    @Test func strayEdgesAreHarmless() {
        var e = AlertFixtures.counting(from: 0)
        #expect(e.handle(.buttonReleased, at: 1).isEmpty, "a release without a press")
        _ = e.handle(.buttonPressed, at: 2)
        #expect(e.handle(.buttonPressed, at: 3).isEmpty, "a second press keeps the first start")
        #expect(e.nextDeadline == 4)
    }
}

@Suite struct AlertEngineAcknowledgementTests {
    @Test func aCaregiverAcknowledgementEndsTheAlert() throws {
        var e = AlertFixtures.alertOut()
        let fx = e.handle(.acknowledged(incidentID: "FG-1", by: "alice"), at: 45)
        let alert = try #require(fx.alerts.first)
        #expect(fx.alerts.count == 1 && alert.kind == .acknowledged && alert.acknowledgedBy == "alice")
        #expect(alert.severity == .information && alert.incident == "FG-1")
        let event = try #require(fx.events.first)
        #expect(event.event == .acknowledged && event.detail.contains("alice") && event.alert == .acknowledged)
        #expect(fx.sounds == [.helpComing, .silent] && fx.indicators == [.monitoring],
                "the wearer hears that help is coming, not the abort's chirp")
        #expect(e.state == .monitoring && e.nextDeadline == nil)
    }

    /// Issue 37: after a station's acknowledgement a long press is staff present at the
    /// bedside (recorded for the station, no help request), once, within 10 minutes (the
    /// presence window; a resident still waiting after that asks for help by the same press);
    /// after any other acknowledgement, or a new incident, it is a help request as ever.
    @Test func aLongPressAfterAStationAcceptedIsPresenceAtTheBedsideNotAHelpRequest() throws {
        var e = AlertFixtures.alertOut()
        _ = e.handle(.acknowledged(incidentID: "FG-1", by: "Anna Smith (station)"), at: 45)
        #expect(e.accepted?.incident == "FG-1" && e.accepted?.by == "Anna Smith (station)" && e.accepted?.at == 45
                && e.accepted?.until == 645 && e.accepted?.presentAt == nil)
        _ = e.handle(.buttonPressed, at: 100)
        let fx = e.advance(to: 102)
        #expect(fx.alerts.isEmpty, "no help request: \(fx.alerts)")
        let present = try #require(fx.events.first)
        #expect(present.event == .staffPresent && present.incident == "FG-1" && present.detail.contains("57 s after Anna Smith (station)"))
        #expect(fx.sounds == [.acknowledge, .silent] && e.state == .monitoring && e.accepted?.presentAt == 102)
        #expect(e.handle(.buttonReleased, at: 103).isEmpty)
        // A second long press is the wearer's: a help request, a new incident.
        _ = e.handle(.buttonPressed, at: 200)
        #expect(e.advance(to: 202).alerts.map(\.kind) == [.helpRequested])

        // Acknowledged by an SMS reply: a long press asks for help.
        var sms = AlertFixtures.alertOut()
        _ = sms.handle(.acknowledged(incidentID: "FG-1", by: "Ben (SMS reply)"), at: 45)
        #expect(sms.accepted == nil)
        _ = sms.handle(.buttonPressed, at: 100)
        #expect(sms.advance(to: 102).alerts.map(\.kind) == [.helpRequested])
        // Past the presence window after the acceptance (nobody came): the wearer's help request.
        var waited = AlertFixtures.alertOut()
        _ = waited.handle(.acknowledged(incidentID: "FG-1", by: "Anna Smith (station)"), at: 45)
        _ = waited.handle(.buttonPressed, at: 45 + AlertEngine.presenceWindow + 1)
        #expect(waited.advance(to: 45 + AlertEngine.presenceWindow + 3).alerts.map(\.kind) == [.helpRequested])
        // Past the active timeout after the acceptance: a help request too.
        var late = AlertFixtures.alertOut()
        _ = late.handle(.acknowledged(incidentID: "FG-1", by: "Anna Smith (station)"), at: 45)
        _ = late.handle(.buttonPressed, at: 3700)
        #expect(late.advance(to: 3702).alerts.map(\.kind) == [.helpRequested])
        // A new fall in between: the accepted call is over.
        var again = AlertFixtures.alertOut()
        _ = again.handle(.acknowledged(incidentID: "FG-1", by: "Anna Smith (station)"), at: 45)
        _ = again.handle(.fallSuspected(AlertFixtures.fall(impact: 57.5)), at: 60)
        _ = again.handle(.buttonPressed, at: 61)
        _ = again.handle(.buttonReleased, at: 61.2)
        _ = again.handle(.buttonPressed, at: 100)
        #expect(again.accepted == nil && again.advance(to: 102).alerts.map(\.kind) == [.helpRequested])
    }

    /// Issue 37 item 4: a station's "I'm here" and "Reset" reach the bridge as steps of the call
    /// it accepted: each recorded with its name and time, neither ending nor silencing an alarm
    /// (a step for another incident, or during a new alarm, changes nothing), and after either a
    /// long press is the wearer's help request again.
    @Test func aStationsPresenceAndResetAreRecordedOnTheAcceptedCallAndSilenceNothing() throws {
        var e = AlertFixtures.alertOut()
        // Before any acceptance: no call to step on; the alert stays out, silent of nothing.
        let early = e.handle(.stationStep(incidentID: "FG-1", step: .reset, by: "Eve (station)"), at: 40)
        #expect(early.alerts.isEmpty && early.sounds.isEmpty && e.state.incident == "FG-1" && e.status == .alertOut)
        #expect(early.events.map(\.event) == [.acknowledgementIgnored] && early.events[0].incident == nil)
        _ = e.handle(.acknowledged(incidentID: "FG-1", by: "Anna Smith (station)"), at: 45)
        // Another incident's step: ignored.
        let other = e.handle(.stationStep(incidentID: "FG-9", step: .presence, by: "Ben Jones (station)"), at: 50)
        #expect(other.events.map(\.event) == [.acknowledgementIgnored] && e.accepted?.presentAt == nil)
        let here = e.handle(.stationStep(incidentID: "FG-1", step: .presence, by: "Ben Jones (station)"), at: 105)
        let present = try #require(here.events.first)
        #expect(present.event == .staffPresent && present.incident == "FG-1" && present.time == 105
                && present.detail.contains("Ben Jones (station), 60 s after Anna Smith (station) accepted"), "\(present.detail)")
        #expect(here.alerts.isEmpty && here.sounds.isEmpty && e.accepted?.presentBy == "Ben Jones (station)" && e.accepted?.presentAt == 105)
        let twice = e.handle(.stationStep(incidentID: "FG-1", step: .presence, by: "Cat (station)"), at: 106)
        #expect(twice.events.map(\.event) == [.acknowledgementIgnored] && e.accepted?.presentBy == "Ben Jones (station)")
        let done = e.handle(.stationStep(incidentID: "FG-1", step: .reset, by: "Ben Jones (station)"), at: 165)
        let reset = try #require(done.events.first)
        #expect(reset.event == .staffReset && reset.incident == "FG-1"
                && reset.detail.contains("Ben Jones (station), 120 s after Anna Smith (station) accepted, 60 s after presence"), "\(reset.detail)")
        #expect(done.alerts.isEmpty && e.accepted?.resetBy == "Ben Jones (station)" && e.accepted?.resetAt == 165 && e.status == .monitoring)
        #expect(e.handle(.stationStep(incidentID: "FG-1", step: .presence, by: "Cat (station)"), at: 170).events.map(\.event) == [.acknowledgementIgnored])
        // After the reset a long press is the wearer's: a help request.
        _ = e.handle(.buttonPressed, at: 200)
        #expect(e.advance(to: 202).alerts.map(\.kind) == [.helpRequested])

        // Reset with nobody present (the bridge is told what the station took): a long press after it asks for help.
        var skipped = AlertFixtures.alertOut()
        _ = skipped.handle(.acknowledged(incidentID: "FG-1", by: "Anna Smith (station)"), at: 45)
        #expect(skipped.handle(.stationStep(incidentID: "FG-1", step: .reset, by: "Anna Smith (station)"), at: 60).events.map(\.event) == [.staffReset])
        _ = skipped.handle(.buttonPressed, at: 100)
        #expect(skipped.advance(to: 102).alerts.map(\.kind) == [.helpRequested])

        // A new fall's alert out: the old call's reset leaves it alone.
        var again = AlertFixtures.alertOut()
        _ = again.handle(.acknowledged(incidentID: "FG-1", by: "Anna Smith (station)"), at: 45)
        _ = again.handle(.fallSuspected(AlertFixtures.fall(impact: 57.5)), at: 60)
        _ = again.advance(to: 200)
        #expect(again.status == .alertOut && again.state.incident == "FG-2")
        let stale = again.handle(.stationStep(incidentID: "FG-1", step: .reset, by: "Anna Smith (station)"), at: 201)
        #expect(stale.alerts.isEmpty && stale.sounds.isEmpty && again.status == .alertOut && again.state.incident == "FG-2")
        #expect(again.handle(.stationStep(incidentID: "FG-2", step: .reset, by: "Anna Smith (station)"), at: 202).events.map(\.event)
                == [.acknowledgementIgnored] && again.status == .alertOut, "a step is no acknowledgement")
    }

    @Test func theWearerHearsWhenTheAlertWentOutAndWhenSomeoneAnswered() throws {
        var e = AlertFixtures.alertOut()
        #expect(e.sound == .alertActive && e.indicator == .alertOut)
        let other = e.handle(.alertDelivered(incidentID: "FG-9"), at: 31)
        #expect(other.isEmpty, "another incident's delivery changes nothing")
        let sent = e.handle(.alertDelivered(incidentID: "FG-1"), at: 32)
        #expect(sent.sounds == [.alertDelivered] && sent.indicators == [.alertDelivered])
        #expect(sent.events.map(\.event) == [.alertDelivered])
        #expect(e.handle(.alertDelivered(incidentID: "FG-1"), at: 33).isEmpty, "said once")
        let reached = e.handle(.contactReached(incidentID: "FG-1", by: "Ben"), at: 40)
        #expect(reached.events.map(\.event) == [.contactReached] && reached.events.first?.detail == "Ben answered the call")
        #expect(reached.sounds.isEmpty, "the delivered pattern goes on")
        guard case let .alertActive(a) = e.state else { Issue.record("\(e.state)"); return }
        #expect(a.delivered && a.reachedBy == "Ben")
        let ack = e.handle(.acknowledged(incidentID: "FG-1", by: "Ben (SMS reply)"), at: 45)
        #expect(ack.sounds == [.helpComing, .silent] && ack.alerts.first?.acknowledgedBy == "Ben (SMS reply)")
        #expect(e.handle(.alertDelivered(incidentID: "FG-1"), at: 46).isEmpty, "nothing after the end")
    }

    @Test func aHelpRequestAfterDeliveryIsSentAgainAndSoundsUndelivered() {
        var e = AlertFixtures.alertOut()
        _ = e.handle(.alertDelivered(incidentID: "FG-1"), at: 32)
        _ = e.handle(.buttonPressed, at: 40)
        let help = e.advance(to: 43)
        #expect(help.alerts.map(\.kind) == [.helpRequested])
        #expect(help.sounds.last == .alertActive && e.indicator == .alertOut, "the new alert is being sent")
    }

    @Test func acknowledgementsOfOtherIncidentsAreRecordedAndIgnored() {
        var e = AlertFixtures.alertOut()
        let unknown = e.handle(.acknowledged(incidentID: "FG-7", by: "mallory"), at: 40)
        #expect(unknown.events.map(\.event) == [.acknowledgementIgnored])
        #expect(unknown.events.first?.incident == nil && unknown.events.first?.detail.contains("FG-7") == true)
        #expect(unknown.alerts.isEmpty && unknown.sounds.isEmpty && e.state.active != nil)

        _ = e.handle(.acknowledged(incidentID: "FG-1", by: "alice"), at: 50)
        let late = e.handle(.acknowledged(incidentID: "FG-1", by: "bob"), at: 60)
        #expect(late.events.map(\.event) == [.acknowledgementIgnored] && late.alerts.isEmpty)
    }

    @Test func anAcknowledgementDuringTheCountdownDoesNotStopIt() {
        var e = AlertFixtures.counting(from: 0)
        let fx = e.handle(.acknowledged(incidentID: "FG-1", by: "alice"), at: 5)
        #expect(fx.events.map(\.event) == [.acknowledgementIgnored] && fx.events.first?.incident == "FG-1")
        #expect(e.nextDeadline == 20 && e.advance(to: 30).alerts.map(\.kind) == [.fall])
    }

    @Test func theActiveTimeoutReturnsToMonitoring() {
        var e = AlertFixtures.alertOut()
        #expect(e.advance(to: 3629.9).isEmpty)
        let fx = e.advance(to: 3630)
        #expect(fx.events.map(\.event) == [.activeTimedOut] && fx.events.first?.time == 3630)
        #expect(fx.events.first?.incident == "FG-1" && fx.alerts.isEmpty)
        #expect(fx.sounds == [.silent] && fx.indicators == [.monitoring])
        #expect(e.state == .monitoring && e.nextDeadline == nil)
    }
}

@Suite struct AlertEngineClockTests {
    @Test func nextDeadlineIsTheEarliestPendingTimer() {
        var e = AlertFixtures.engine()
        #expect(e.nextDeadline == nil)
        _ = e.handle(.sensorFault(AlertFixtures.fault), at: 0)
        #expect(e.nextDeadline == 60)
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 10)
        #expect(e.nextDeadline == 30, "final phase at 30 comes before the fault report at 60")
        _ = e.handle(.buttonPressed, at: 29)
        #expect(e.nextDeadline == 30)
        _ = e.advance(to: 30)
        #expect(e.nextDeadline == 31, "the long press; the fall's deadline waits for the press")
        _ = e.handle(.buttonReleased, at: 30.5)
        #expect(e.state == .monitoring && e.nextDeadline == 60)
        _ = e.advance(to: 60)
        #expect(e.nextDeadline == nil, "a reported fault has no more timers")
    }

    @Test func nextDeadlineIsAlwaysLaterThanTheClock() {
        var e = AlertFixtures.engine(try! AlertConfiguration.testing(faultGrace: 0))
        let inputs: [AlertInput] = [.sensorFault(AlertFixtures.fault), .fallSuspected(AlertFixtures.fall()),
                                    .buttonPressed, .buttonReleased, .sensorRecovered]
        var t = 0.0
        for input in inputs {
            _ = e.handle(input, at: t)
            if let d = e.nextDeadline { #expect(d > t, "\(input) left a deadline at \(d) <= \(t)") }
            t += 1
        }
    }

    @Test func timeNeverGoesBackwards() {
        var e = AlertFixtures.engine()
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 10)
        let fx = e.handle(.fallSuspected(AlertFixtures.fall()), at: 5)
        #expect(fx.events.first?.time == 10 && e.clock == 10)
        _ = e.handle(.buttonPressed, at: .nan)
        #expect(e.clock == 10 && e.nextDeadline == 12)
        #expect(e.advance(to: .infinity).isEmpty && e.clock == 10)
    }
}

/// Arming is decided by the engine: the countdown's fall alert is armed when it starts and
/// disarmed when it ends without that alert; an expiry or a help request replaces it.
@Suite struct AlertEngineArmingTests {
    @Test func anAbortDisarmsAndTheExpirySendsWhatWasArmed() {
        var e = AlertFixtures.engine()
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 0)
        _ = e.handle(.buttonPressed, at: 5)
        let abort = e.handle(.buttonReleased, at: 5.2)
        #expect(abort.disarmed == ["FG-1"] && e.armedIncident == nil && e.status == .monitoring)
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 100)
        let expiry = e.advance(to: 130)
        #expect(expiry.alerts.map(\.incident) == ["FG-2"] && expiry.disarmed.isEmpty, "the dispatch replaces the armed alert")
        #expect(e.armedIncident == nil && e.status == .alertOut)
    }

    @Test func aHelpRequestReplacesTheArmedFallAlert() {
        var e = AlertFixtures.engine()
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 0)
        _ = e.handle(.buttonPressed, at: 3)
        let help = e.advance(to: 5.5)
        #expect(help.alerts.map(\.kind) == [.helpRequested] && help.disarmed.isEmpty && e.armedIncident == nil)
    }

    @Test func aSensorFaultShowsInTheStatusOnlyWithoutAnIncident() {
        var e = AlertFixtures.engine()
        _ = e.handle(.sensorFault(SensorFault(.stalled, device: "iio:device0", detail: "no data")), at: 0)
        #expect(e.status == .sensorFault && e.indicator == .fault)
        _ = e.handle(.fallSuspected(AlertFixtures.fall()), at: 1)
        #expect(e.status == .countdown && e.indicator == .fault, "the LED alone lets the fault take precedence")
    }
}

@Suite struct AlertEngineResumeTests {
    @Test func anAlarmLeftOutByAPreviousRunIsTakenOverWithoutSendingItAgainAndAnAcknowledgementEndsIt() throws {
        var e = AlertFixtures.engine()
        let left = Alert(kind: .fall, incident: "FG-4", time: 12, fall: AlertFixtures.fall())
        let fx = e.handle(.alertResumed(left), at: 100)
        #expect(fx.alerts.isEmpty, "not sent again")
        #expect(e.status == .alertOut && e.state.active?.incident == "FG-4")
        #expect(fx.sounds == [.alertActive] && fx.indicators == [.alertOut])
        #expect(fx.events.map(\.event) == [.alertResumed])
        let ack = e.handle(.acknowledged(incidentID: "FG-4", by: "Anna"), at: 160)
        #expect(ack.alerts.map(\.kind) == [.acknowledged] && e.status == .monitoring)
    }

    @Test func anAlarmLeftOutIsNotTakenOverWhileAnotherIncidentIsUnderWay() {
        var e = AlertFixtures.counting(from: 0)
        let fx = e.handle(.alertResumed(Alert(kind: .helpRequested, incident: "FG-0", time: 1)), at: 1)
        #expect(fx.alerts.isEmpty && e.status == .countdown && e.state.countdown?.incident == "FG-1")
        #expect(fx.events.map(\.event) == [.alertResumed])
    }
}
