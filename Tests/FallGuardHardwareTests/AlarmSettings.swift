import FallGuardConfig
import FallGuardCore
import FallGuardHardware
import FallGuardTestSupport

/// The `alarm` section the tests run with: the configuration's defaults with the given changes.
func alarmSection(countdown: Double? = nil, finalPhase: Double? = nil, longPress: Double? = nil,
                  faultGrace: Double? = nil) -> AlarmSection {
    var s = AlarmSection.defaults
    if let countdown { s.countdown = countdown }
    if let finalPhase { s.finalPhase = finalPhase }
    if let longPress { s.longPress = longPress }
    if let faultGrace { s.faultGrace = faultGrace }
    return s
}

extension AlarmController {
    /// The alarm with the values `settings` gives, as the daemon makes it.
    convenience init(settings: AlarmSection, buzzer: PatternPlayer?, led: PatternPlayer?, button: (any ButtonSource)?,
                     sink: any AlertSink, incidentLog: IncidentLog?) throws {
        self.init(alert: try settings.alertConfiguration(), button: settings.buttonTimings, patterns: settings.alarmPatterns,
                  buzzer: buzzer, led: led, button: button, sink: sink, incidentLog: incidentLog)
    }
}
