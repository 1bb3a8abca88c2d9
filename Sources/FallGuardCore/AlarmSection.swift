/// The `alarm` section of the configuration file: the countdown, the button's timings and the
/// buzzer and LED patterns. Every key is optional; missing keys take the defaults below.
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
///   led-patterns:            # per LED state: monitoring, countdown, alert-out, fault
///     monitoring: {on-ms: 100, off-ms: 1900}
/// ```
public struct AlarmSection: ConfigSection, Equatable {
    public var countdown: Double
    public var finalPhase: Double
    public var longPress: Double
    public var debounceMs: Int
    public var alertTimeout: Double
    public var faultGrace: Double
    public var autoCancelWhenWalking: Bool
    public var incidentPrefix: String
    /// Overrides by ``AlarmSound`` raw value (`countdown-final`, …); see ``pattern(for:)``.
    public var patterns: [String: OnOffPattern]
    /// Overrides by ``StatusIndicator`` raw value; see ``ledPattern(for:)``.
    public var ledPatterns: [String: OnOffPattern]

    public init(countdown: Double = 30, finalPhase: Double = 10, longPress: Double = 2, debounceMs: Int = 30,
                alertTimeout: Double = 3600, faultGrace: Double = 60, autoCancelWhenWalking: Bool = false,
                incidentPrefix: String = "FG", patterns: [String: OnOffPattern] = [:],
                ledPatterns: [String: OnOffPattern] = [:]) {
        self.countdown = countdown
        self.finalPhase = finalPhase
        self.longPress = longPress
        self.debounceMs = debounceMs
        self.alertTimeout = alertTimeout
        self.faultGrace = faultGrace
        self.autoCancelWhenWalking = autoCancelWhenWalking
        self.incidentPrefix = incidentPrefix
        self.patterns = patterns
        self.ledPatterns = ledPatterns
    }

    /// The buzzer patterns used when the file names none: a 1 Hz beep in the countdown, 4 Hz
    /// in its final phase, a calm double beep every 3 s while the alert is out, a triple chirp
    /// every 10 s for a sensor fault, and two one-shots.
    public static let defaultPatterns: [AlarmSound: OnOffPattern] = [
        .silent: .off,
        .countdown: OnOffPattern(onMs: 200, offMs: 800),
        .countdownFinal: OnOffPattern(onMs: 100, offMs: 150),
        .alertActive: OnOffPattern(onMs: 150, offMs: 150, count: 2, pauseMs: 2700),
        .helpRequested: OnOffPattern(onMs: 500, offMs: 100, count: 3),
        .sensorFault: OnOffPattern(onMs: 50, offMs: 150, count: 3, pauseMs: 9400),
        .acknowledge: OnOffPattern(onMs: 60, offMs: 60, count: 2),
    ]

    /// The LED patterns used when the file names none: slow heartbeat, fast blink, steady,
    /// and a triple blink for a fault.
    public static let defaultLEDPatterns: [StatusIndicator: OnOffPattern] = [
        .monitoring: OnOffPattern(onMs: 100, offMs: 1900),
        .countdown: OnOffPattern(onMs: 100, offMs: 100),
        .alertOut: .steady,
        .fault: OnOffPattern(onMs: 100, offMs: 150, count: 3, pauseMs: 1000),
    ]

    /// The pattern this configuration gives `sound`.
    public func pattern(for sound: AlarmSound) -> OnOffPattern {
        patterns[sound.rawValue] ?? Self.defaultPatterns[sound] ?? .off
    }

    /// The pattern this configuration gives the LED in `indicator`.
    public func ledPattern(for indicator: StatusIndicator) -> OnOffPattern {
        ledPatterns[indicator.rawValue] ?? Self.defaultLEDPatterns[indicator] ?? .off
    }

    /// The engine's configuration; throws naming the key out of range.
    public func alertConfiguration() throws(AlertConfigurationError) -> AlertConfiguration {
        try AlertConfiguration(countdown: countdown, longPress: longPress, finalPhase: finalPhase,
                               activeTimeout: alertTimeout, sensorFaultGrace: faultGrace,
                               autoCancelWhenWalking: autoCancelWhenWalking, incidentPrefix: incidentPrefix)
    }

    /// The button's debouncer settings, in nanoseconds.
    public func buttonDebouncer(initiallyPressed: Bool = false, at t: Int64 = 0) -> ButtonDebouncer {
        ButtonDebouncer(debounce: Int64(debounceMs) * 1_000_000, longPress: Int64((longPress * 1e9).rounded()),
                        initiallyPressed: initiallyPressed, at: t)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        do { _ = try alertConfiguration() } catch {
            // The engine names its keys; two are spelled differently in this section.
            let key = ["active-timeout": "alert-timeout", "sensor-fault-grace": "fault-grace"][error.key] ?? error.key
            let message = error.description.replacingFirst("'\(error.key)'", with: "'\(key)'")
            p.append(ConfigProblem(path + [key], message))
        }
        if !(0...500).contains(debounceMs) {
            p.append(ConfigProblem(path + ["debounce-ms"], "\(debounceMs) ms is outside 0...500 ms"))
        }
        for (name, pattern) in patterns.sorted(by: { $0.key < $1.key }) {
            if AlarmSound(rawValue: name) == nil {
                p.append(ConfigProblem(path + ["patterns", name], "unknown sound; known: \(AlarmSound.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            p += pattern.problems(at: path + ["patterns", name])
        }
        for (name, pattern) in ledPatterns.sorted(by: { $0.key < $1.key }) {
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
        case patterns, ledPatterns = "led-patterns"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = AlarmSection()
        countdown = try c.decodeIfPresent(Double.self, forKey: .countdown) ?? d.countdown
        finalPhase = try c.decodeIfPresent(Double.self, forKey: .finalPhase) ?? d.finalPhase
        longPress = try c.decodeIfPresent(Double.self, forKey: .longPress) ?? d.longPress
        debounceMs = try c.decodeIfPresent(Int.self, forKey: .debounceMs) ?? d.debounceMs
        alertTimeout = try c.decodeIfPresent(Double.self, forKey: .alertTimeout) ?? d.alertTimeout
        faultGrace = try c.decodeIfPresent(Double.self, forKey: .faultGrace) ?? d.faultGrace
        autoCancelWhenWalking = try c.decodeIfPresent(Bool.self, forKey: .autoCancelWhenWalking) ?? d.autoCancelWhenWalking
        incidentPrefix = try c.decodeIfPresent(String.self, forKey: .incidentPrefix) ?? d.incidentPrefix
        patterns = try c.decodeIfPresent([String: OnOffPattern].self, forKey: .patterns) ?? [:]
        ledPatterns = try c.decodeIfPresent([String: OnOffPattern].self, forKey: .ledPatterns) ?? [:]
    }
}

extension String {
    /// This string with the first `target` replaced (no Foundation in this module).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        let chars = Array(self), t = Array(target)
        guard chars.count >= t.count else { return self }
        for i in 0...(chars.count - t.count) where Array(chars[i..<(i + t.count)]) == t {
            return String(chars[..<i]) + replacement + String(chars[(i + t.count)...])
        }
        return self
    }
}
