import FallGuardCore

/// `alarm:` — the countdown, the button's timings and the buzzer and LED patterns. Every key
/// is optional; missing keys take the defaults in ``defaults``.
///
/// ```yaml
/// alarm:
///   countdown: 30            # s, 5...300
///   final-phase: 10          # s of faster beeping before the alert, 0...countdown
///   long-press: 2            # s held = help request, 0.5...10
///   debounce-ms: 30          # button debounce, 0...500
///   alert-timeout: 3600      # s the calm alarm lasts after an alert, 60...86400
///   fault-grace: 60          # s a sensor fault may last before helpers are told, 0...3600
///   auto-cancel-when-walking: false
///   incident-prefix: FG
///   patterns:                # per sound, each replacing that sound's default
///     countdown: {on-ms: 200, off-ms: 800}
///   led-patterns:            # per LED state: monitoring, countdown, alert-out, alert-delivered, fault
///     monitoring: {on-ms: 100, off-ms: 1900}
/// ```
public struct AlarmSection: ConfigSection, Codable, Equatable {
    public var countdown: Double
    public var finalPhase: Double
    public var longPress: Double
    public var debounceMs: Int
    public var alertTimeout: Double
    public var faultGrace: Double
    public var autoCancelWhenWalking: Bool
    public var incidentPrefix: String
    /// Overrides by ``AlarmSound`` raw value (`countdown-final`, …); see ``patterns``.
    public var patternOverrides: [String: OnOffPattern]
    /// Overrides by ``StatusIndicator`` raw value.
    public var ledPatternOverrides: [String: OnOffPattern]

    public init(countdown: Double, finalPhase: Double, longPress: Double, debounceMs: Int,
                alertTimeout: Double, faultGrace: Double, autoCancelWhenWalking: Bool,
                incidentPrefix: String, patternOverrides: [String: OnOffPattern] = [:],
                ledPatternOverrides: [String: OnOffPattern] = [:]) {
        self.countdown = countdown
        self.finalPhase = finalPhase
        self.longPress = longPress
        self.debounceMs = debounceMs
        self.alertTimeout = alertTimeout
        self.faultGrace = faultGrace
        self.autoCancelWhenWalking = autoCancelWhenWalking
        self.incidentPrefix = incidentPrefix
        self.patternOverrides = patternOverrides
        self.ledPatternOverrides = ledPatternOverrides
    }

    /// What an empty section gives.
    public init() { self = Self.defaults }

    /// Every key's default (the thesis: a 30 s countdown, a 2 s long press).
    public static let defaults = AlarmSection(countdown: 30, finalPhase: 10, longPress: 2, debounceMs: 30,
                                              alertTimeout: 3600, faultGrace: 60, autoCancelWhenWalking: false,
                                              incidentPrefix: "FG")

    /// The buzzer patterns used when the file names none: a 1 Hz beep in the countdown, 4 Hz
    /// in its final phase, a calm double beep every 3 s while the alert is being sent, one beep
    /// every 6 s once a message went out, a triple chirp every 10 s for a sensor fault, and three
    /// one-shots (help requested; a short chirp for an abort; three long tones: help is coming).
    public static let defaultPatterns: [AlarmSound: OnOffPattern] = [
        .silent: .off,
        .countdown: OnOffPattern(onMs: 200, offMs: 800),
        .countdownFinal: OnOffPattern(onMs: 100, offMs: 150),
        .alertActive: OnOffPattern(onMs: 150, offMs: 150, count: 2, pauseMs: 2700),
        .helpRequested: OnOffPattern(onMs: 500, offMs: 100, count: 3),
        .sensorFault: OnOffPattern(onMs: 50, offMs: 150, count: 3, pauseMs: 9400),
        .alertDelivered: OnOffPattern(onMs: 150, offMs: 0, count: 1, pauseMs: 5850),
        .acknowledge: OnOffPattern(onMs: 60, offMs: 60, count: 2),
        .helpComing: OnOffPattern(onMs: 700, offMs: 300, count: 3),
    ]

    /// The LED patterns used when the file names none: slow heartbeat, fast blink, steady while
    /// the alert is being sent, a slow 1 s blink once it went out, and a triple blink for a fault.
    public static let defaultLEDPatterns: [StatusIndicator: OnOffPattern] = [
        .monitoring: OnOffPattern(onMs: 100, offMs: 1900),
        .countdown: OnOffPattern(onMs: 100, offMs: 100),
        .alertOut: .steady,
        .alertDelivered: OnOffPattern(onMs: 1000, offMs: 1000),
        .fault: OnOffPattern(onMs: 100, offMs: 150, count: 3, pauseMs: 1000),
    ]

    /// The patterns: the defaults with this section's overrides.
    public var patterns: AlarmPatterns {
        var sounds = Self.defaultPatterns, led = Self.defaultLEDPatterns
        for (name, p) in patternOverrides { if let s = AlarmSound(rawValue: name) { sounds[s] = p } }
        for (name, p) in ledPatternOverrides { if let i = StatusIndicator(rawValue: name) { led[i] = p } }
        return AlarmPatterns(sounds: sounds, led: led)
    }

    /// The button's debounce and long press.
    public var buttonTimings: ButtonTimings { ButtonTimings(debounceMs: debounceMs, longPress: longPress) }

    /// The engine's configuration; throws naming the setting out of range (see ``message(for:)``).
    public func alertConfiguration() throws(AlertConfigurationError) -> AlertConfiguration {
        try AlertConfiguration(countdown: countdown, longPress: longPress, finalPhase: finalPhase,
                               activeTimeout: alertTimeout, sensorFaultGrace: faultGrace,
                               autoCancelWhenWalking: autoCancelWhenWalking, incidentPrefix: incidentPrefix)
    }

    /// This section's key for each engine setting.
    public static func key(_ setting: AlertConfiguration.Setting) -> String {
        switch setting {
        case .countdown: CodingKeys.countdown.rawValue
        case .longPress: CodingKeys.longPress.rawValue
        case .finalPhase: CodingKeys.finalPhase.rawValue
        case .activeTimeout: CodingKeys.alertTimeout.rawValue
        case .sensorFaultGrace: CodingKeys.faultGrace.rawValue
        case .incidentPrefix: CodingKeys.incidentPrefix.rawValue
        case .notWornAlert: "not-worn-alert"
        }
    }

    /// The error in the file's words (`alert setting 'alert-timeout' = …`).
    public static func message(for error: AlertConfigurationError) -> String {
        error.message(naming: key(error.setting))
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        do { _ = try alertConfiguration() } catch {
            p.append(ConfigProblem(path + [Self.key(error.setting)], Self.message(for: error)))
        }
        if !ButtonTimings.debounceRange.contains(debounceMs) {
            p.append(ConfigProblem(path + ["debounce-ms"], "\(debounceMs) ms is outside 0...500 ms"))
        }
        for (name, pattern) in patternOverrides.sorted(by: { $0.key < $1.key }) {
            if AlarmSound(rawValue: name) == nil {
                p.append(ConfigProblem(path + ["patterns", name], "unknown sound; known: \(AlarmSound.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            p += pattern.problems(at: path + ["patterns", name])
        }
        for (name, pattern) in ledPatternOverrides.sorted(by: { $0.key < $1.key }) {
            if StatusIndicator(rawValue: name) == nil {
                p.append(ConfigProblem(path + ["led-patterns", name], "unknown LED state; known: \(StatusIndicator.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            p += pattern.problems(at: path + ["led-patterns", name])
        }
        return p
    }

    enum CodingKeys: String, CodingKey {
        case countdown, finalPhase = "final-phase", longPress = "long-press", debounceMs = "debounce-ms"
        case alertTimeout = "alert-timeout", faultGrace = "fault-grace"
        case autoCancelWhenWalking = "auto-cancel-when-walking", incidentPrefix = "incident-prefix"
        case patternOverrides = "patterns", ledPatternOverrides = "led-patterns"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self.defaults
        countdown = try c.value(.countdown, default: d.countdown)
        finalPhase = try c.value(.finalPhase, default: d.finalPhase)
        longPress = try c.value(.longPress, default: d.longPress)
        debounceMs = try c.value(.debounceMs, default: d.debounceMs)
        alertTimeout = try c.value(.alertTimeout, default: d.alertTimeout)
        faultGrace = try c.value(.faultGrace, default: d.faultGrace)
        autoCancelWhenWalking = try c.value(.autoCancelWhenWalking, default: d.autoCancelWhenWalking)
        incidentPrefix = try c.value(.incidentPrefix, default: d.incidentPrefix)
        patternOverrides = try c.sections([String: OnOffPattern].self, forKey: .patternOverrides) ?? [:]
        ledPatternOverrides = try c.sections([String: OnOffPattern].self, forKey: .ledPatternOverrides) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(countdown, forKey: .countdown)
        try c.encode(finalPhase, forKey: .finalPhase)
        try c.encode(longPress, forKey: .longPress)
        try c.encode(debounceMs, forKey: .debounceMs)
        try c.encode(alertTimeout, forKey: .alertTimeout)
        try c.encode(faultGrace, forKey: .faultGrace)
        try c.encode(autoCancelWhenWalking, forKey: .autoCancelWhenWalking)
        try c.encode(incidentPrefix, forKey: .incidentPrefix)
        try c.encode(sections: patternOverrides, forKey: .patternOverrides)
        try c.encode(sections: ledPatternOverrides, forKey: .ledPatternOverrides)
    }
}

/// A buzzer or LED pattern: `{on-ms, off-ms, count, pause-ms}`; missing keys take 0 ms and a
/// count of 1.
extension OnOffPattern: ConfigSection {
    enum CodingKeys: String, CodingKey {
        case onMs = "on-ms", offMs = "off-ms", count, pauseMs = "pause-ms"
    }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(onMs: try c.value(.onMs, default: 0), offMs: try c.value(.offMs, default: 0),
                  count: try c.value(.count, default: 1), pauseMs: try c.value(.pauseMs, default: 0))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(onMs, forKey: .onMs)
        try c.encode(offMs, forKey: .offMs)
        try c.encode(count, forKey: .count)
        try c.encode(pauseMs, forKey: .pauseMs)
    }

    /// Everything wrong with it, keys relative to `path`.
    public func problems(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        for (key, v) in [("on-ms", onMs), ("off-ms", offMs), ("pause-ms", pauseMs)] where !(0...600_000).contains(v) {
            p.append(ConfigProblem(path + [key], "\(v) ms is outside 0...600000 ms"))
        }
        if !(1...100).contains(count) { p.append(ConfigProblem(path + ["count"], "\(count) is outside 1...100")) }
        return p
    }
}
