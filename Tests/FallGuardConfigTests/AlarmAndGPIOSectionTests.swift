import FallGuardConfig
import FallGuardCore
import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

// The `alarm` and `gpio` sections: keys, defaults, checks (the sections moved here from Core).
@Suite struct AlarmAndGPIOSectionTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test func anEmptyAlarmSectionHasTheDocumentedDefaults() throws {
        let a = try decode(AlarmSection.self, "{}")
        #expect(a == AlarmSection())
        #expect(a.countdown == 30 && a.longPress == 2 && a.debounceMs == 30 && a.faultGrace == 60 && a.finalPhase == 10)
        #expect(a.problems(at: ["alarm"]).isEmpty)
        let c = try a.alertConfiguration()
        #expect(c.countdown == 30 && c.longPress == 2 && c.finalPhase == 10)
        #expect(c.alertTimeout == 3600 && c.faultGrace == 60)
        #expect(!c.autoCancelWhenWalking && c.incidentPrefix == "FG")
        #expect(a.buttonTimings == ButtonTimings(debounceMs: 30, longPress: 2))
        #expect(a.alarmPatterns.pattern(for: .countdown) == OnOffPattern(onMs: 200, offMs: 800))
        #expect(a.alarmPatterns.ledPattern(for: .alertOut) == .steady)
        for s in AlarmSound.allCases where s != .silent { #expect(a.alarmPatterns.pattern(for: s).onMs > 0, "\(s)") }
    }

    @Test func kebabCaseKeysAndPatternOverridesDecodeAndRoundTrip() throws {
        let a = try decode(AlarmSection.self, #"{"countdown": 20, "long-press": 3, "debounce-ms": 40, "fault-grace": 5, "alert-timeout": 600, "patterns": {"countdown": {"on-ms": 300, "off-ms": 700}}, "led-patterns": {"fault": {"on-ms": 50}}}"#)
        #expect(a.countdown == 20 && a.longPress == 3 && a.debounceMs == 40 && a.faultGrace == 5 && a.alertTimeout == 600)
        #expect(a.alarmPatterns.pattern(for: .countdown) == OnOffPattern(onMs: 300, offMs: 700))
        #expect(a.alarmPatterns.pattern(for: .countdownFinal) == AlarmSection.defaultPatterns[.countdownFinal])
        #expect(a.alarmPatterns.ledPattern(for: .fault) == OnOffPattern(onMs: 50))
        let again = try JSONDecoder().decode(AlarmSection.self, from: JSONEncoder().encode(a))
        #expect(again == a)
    }

    /// `not-worn-alert`: seconds (an hour unless given), `off`, and at least 5 minutes in the
    /// file (the engine takes a minute, which the wear watch's verdict needs at least).
    @Test func theNotWornAlertIsSecondsOrOff() throws {
        #expect(try decode(AlarmSection.self, "{}").alertConfiguration().notWornAlert == nil, "off unless asked for")
        #expect(try decode(AlarmSection.self, #"{"not-worn-alert": 900}"#).alertConfiguration().notWornAlert == 900)
        let off = try decode(AlarmSection.self, #"{"not-worn-alert": "off"}"#)
        #expect(off.notWornAlert == nil && off.problems(at: ["alarm"]).isEmpty)
        #expect(try JSONDecoder().decode(AlarmSection.self, from: JSONEncoder().encode(off)) == off, "off round-trips")
        let short = try decode(AlarmSection.self, #"{"not-worn-alert": 120}"#)
        #expect(short.problems(at: ["alarm"]).map(\.key) == ["alarm.not-worn-alert"])
        #expect(short.problems(at: ["alarm"]).first?.message.contains("outside 300.0...86400.0 s (or off)") == true)
        let tiny = try decode(AlarmSection.self, #"{"not-worn-alert": 10}"#)
        #expect(tiny.problems(at: ["alarm"]).map(\.key) == ["alarm.not-worn-alert"], "one problem, from the engine's range")
        #expect(throws: (any Error).self) { try decode(AlarmSection.self, #"{"not-worn-alert": "never"}"#) }
    }

    @Test func outOfRangeAlarmValuesAreReportedWithTheirKeys() throws {
        let a = try decode(AlarmSection.self, #"{"countdown": 4}"#)
        #expect(a.problems(at: ["alarm"]).map(\.key) == ["alarm.countdown"])
        let b = try decode(AlarmSection.self, #"{"fault-grace": -1, "debounce-ms": 900, "patterns": {"beep": {"on-ms": 1}}}"#)
        let p = b.problems(at: ["alarm"])
        #expect(p.map(\.key) == ["alarm.debounce-ms", "alarm.fault-grace", "alarm.patterns.beep"])
        #expect(p[1].message.contains("'fault-grace'"))
        let c = try decode(AlarmSection.self, #"{"alert-timeout": 10}"#)
        #expect(c.problems(at: ["alarm"]).map(\.key) == ["alarm.alert-timeout"])
        #expect(c.problems(at: ["alarm"]).first?.message == "alert setting 'alert-timeout' = 10.0 s is outside 60.0...86400.0 s")
    }

    @Test func patternsCheckTheirRanges() {
        let p = OnOffPattern(onMs: -1, offMs: 0, count: 0).problems(at: ["alarm", "patterns", "countdown"])
        #expect(p.map(\.key) == ["alarm.patterns.countdown.on-ms", "alarm.patterns.countdown.count"])
    }

    @Test func everyEngineSettingHasTheSectionsKey() {
        #expect(AlertConfiguration.Setting.allCases.map(AlarmSection.key) ==
                ["countdown", "long-press", "final-phase", "alert-timeout", "fault-grace", "incident-prefix", "not-worn-alert"])
    }

    @Test func theGPIODefaultsAreTheCommonPiWiring() throws {
        let g = try decode(GPIOSection.self, "{}")
        #expect(g == GPIOSection())
        let w = g.wiring
        #expect(g.enabled && w.chip == "gpiochip0" && w.consumer == "fallguard" && w.buzzer.line == "GPIO18" && w.buzzer.type == .active)
        #expect(w.button.line == "GPIO17" && w.button.bias == .pullUp && w.button.activeLow)
        #expect(w.led == nil && g.problems(at: ["gpio"]).isEmpty)
    }

    @Test func linesMayBeOffsetsAndEveryPartIsDecoded() throws {
        let g = try decode(GPIOSection.self, #"{"chip": "pinctrl-bcm2711", "buzzer": {"line": 12, "type": "passive", "tone-hz": 2700, "pwm-chip": 0}, "button": {"line": "GPIO5", "bias": "pull-down", "active-low": false}, "led": {"line": 27}}"#)
        let w = g.wiring
        #expect(w.buzzer.line == "12" && w.buzzer.type == .passive && w.buzzer.toneHz == 2700 && w.buzzer.pwmChip == 0)
        #expect(w.button == .init(line: "GPIO5", bias: .pullDown, activeLow: false))
        #expect(w.led == .init(line: "27", activeLow: false))
        #expect(g.problems(at: ["gpio"]).isEmpty)
        #expect(try JSONDecoder().decode(GPIOSection.self, from: JSONEncoder().encode(g)) == g)
    }

    @Test func badGPIOValuesNameTheirKeys() throws {
        let g = try decode(GPIOSection.self, #"{"buzzer": {"line": "GPIO17", "tone-hz": 5, "pwm-chip": 0}, "led": {"line": ""}}"#)
        let keys = g.problems(at: ["gpio"]).map(\.key)
        #expect(keys == ["gpio.button.line", "gpio.led.line", "gpio.buzzer.pwm-chip"])
        let h = try decode(GPIOSection.self, #"{"buzzer": {"type": "passive", "tone-hz": 50000}}"#)
        #expect(h.problems(at: ["gpio"]).map(\.key) == ["gpio.buzzer.tone-hz"])
        #expect(throws: DecodingError.self) { try decode(GPIOSection.self, #"{"led": {}}"#) }
        #expect(throws: DecodingError.self) { try decode(GPIOSection.self, #"{"button": {"bias": "up"}}"#) }
    }

    @Test func theBiasWordsAreTheOptionsToo() {
        #expect(GPIOSection.biases.map(\.word) == ["pull-up", "pull-down", "disable", "as-is"])
        for b in LineBias.allCases { #expect(GPIOSection.bias(GPIOSection.word(for: b)) == b) }
        #expect(GPIOSection.bias("up") == nil)
    }
}

@Suite struct SpeechSectionTests {
    @Test func speechIsOffByDefaultAndItsValuesAreChecked() throws {
        let d = try decodeSection(SpeechSection.self, "{}")
        #expect(!d.enabled && d.settings == SpeechSettings() && d.problems(at: ["speech"]).isEmpty)
        let s = try decodeSection(SpeechSection.self, #"{"voice": "de", "rate": 180, "help-coming": "{by} weiß Bescheid."}"#)
        #expect(s.settings.voice == "de" && s.settings.rate == 180 && s.settings.helpComing == "{by} weiß Bescheid.")
        let bad = try decodeSection(SpeechSection.self, #"{"voice": "-w /tmp/x", "rate": 50, "device": ""}"#)
        let keys = bad.problems(at: ["speech"]).map { $0.keyPath.joined(separator: ".") }
        #expect(Set(keys) == ["speech.voice", "speech.rate", "speech.device"], "\(keys)")
    }
}
