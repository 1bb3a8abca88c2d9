import FallGuardConfigKeys
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
///   recovered-fall: true     # up again within the countdown: a recovered fall, no alarm
///   not-worn-alert: off      # s not worn before helpers are told, 300...86400, or off
///   incident-prefix: FG
///   patterns:                # per sound, each replacing that sound's default
///     countdown: {on-ms: 200, off-ms: 800}
///   led-patterns:            # per LED state: monitoring, countdown, alert-out, alert-delivered, fault
///     monitoring: {on-ms: 100, off-ms: 1900}
/// ```
public struct AlarmSection: KeyedSection, Codable, Equatable {
    public var countdown: Double = 30
    public var finalPhase: Double = 10
    public var longPress: Double = 2
    public var debounceMs: Int = 30
    public var alertTimeout: Double = 3600
    public var faultGrace: Double = 60
    public var autoCancelWhenWalking = false
    /// The wearer up again within a fall's countdown ends it as a recovered fall (the policy's
    /// `recovered-fall` route, no alarm); false: the alarm goes out anyway.
    public var recoveredFall = true
    public var incidentPrefix = "FG"
    /// Seconds the device may lie unworn before the helpers are told; nil (`off`, the default:
    /// a wearable taken off every night, or a bedside box, would message them daily): never.
    public var notWornAlert: Double? = nil
    /// Overrides by ``AlarmSound`` raw value (`countdown-final`, …); see ``alarmPatterns``.
    public var patterns: [String: OnOffPattern] = [:]
    /// Overrides by ``StatusIndicator`` raw value.
    public var ledPatterns: [String: OnOffPattern] = [:]

    /// What an empty section gives: every key's default (the thesis: a 30 s countdown, a 2 s long press).
    public init() {}

    /// Every key's default.
    public static let defaults = AlarmSection()

    /// The keys; the engine's settings (countdown, final-phase, long-press, alert-timeout,
    /// fault-grace, incident-prefix) are range-checked by the engine's own configuration.
    public static var keys: [ConfigKey<Self>] {
        [.value("countdown", \.countdown), .value("final-phase", \.finalPhase), .value("long-press", \.longPress),
         .value("debounce-ms", \.debounceMs, in: ButtonTimings.debounceRange, unit: " ms"),
         .value("alert-timeout", \.alertTimeout), .value("fault-grace", \.faultGrace),
         .value("auto-cancel-when-walking", \.autoCancelWhenWalking), .value("recovered-fall", \.recoveredFall),
         .value("incident-prefix", \.incidentPrefix),
         .custom("not-worn-alert", \.notWornAlert, read: { c, k in
             // A number of seconds, or `off`.
             if (try? c.decodeIfPresent(String.self, forKey: k)) == "off" { return .some(nil) }
             return try c.decodeIfPresent(Double.self, forKey: k).map { $0 }
         }, write: { v, c, k in if let v { try c.encode(v, forKey: k) } else { try c.encode("off", forKey: k) } }),
         .sections("patterns", \.patterns), .sections("led-patterns", \.ledPatterns)]
    }

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
    public var alarmPatterns: AlarmPatterns {
        var sounds = Self.defaultPatterns, led = Self.defaultLEDPatterns
        for (name, p) in patterns { if let s = AlarmSound(rawValue: name) { sounds[s] = p } }
        for (name, p) in ledPatterns { if let i = StatusIndicator(rawValue: name) { led[i] = p } }
        return AlarmPatterns(sounds: sounds, led: led)
    }

    /// The button's debounce and long press.
    public var buttonTimings: ButtonTimings { ButtonTimings(debounceMs: debounceMs, longPress: longPress) }

    /// The engine's configuration; throws naming the setting out of range (see ``message(for:)``).
    public func alertConfiguration() throws(AlertConfigurationError) -> AlertConfiguration {
        try AlertConfiguration(countdown: countdown, longPress: longPress, finalPhase: finalPhase,
                               alertTimeout: alertTimeout, faultGrace: faultGrace,
                               autoCancelWhenWalking: autoCancelWhenWalking, incidentPrefix: incidentPrefix,
                               notWornAlert: notWornAlert, recoveredFall: recoveredFall)
    }

    /// Seconds `not-worn-alert` may be.
    public static let notWornAlertRange: ClosedRange<Double> = 300...86_400

    /// This section's key for each engine setting: named like it.
    public static func key(_ setting: AlertConfiguration.Setting) -> String { kebabCase(setting.rawValue) }

    /// The error in the file's words (`alert setting 'alert-timeout' = …`).
    public static func message(for error: AlertConfigurationError) -> String {
        error.message(naming: key(error.setting))
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        do { _ = try alertConfiguration() } catch {
            p.append(ConfigProblem(path + [Self.key(error.setting)], Self.message(for: error)))
        }
        // The file asks for 5 minutes at least: the wear watch's verdict itself takes minutes.
        if let n = notWornAlert, n >= AlertConfiguration.notWornAlertRange.lowerBound, !Self.notWornAlertRange.contains(n) {
            p.append(ConfigProblem(Self.at(path, \.notWornAlert), "\(n) s is outside \(Self.notWornAlertRange.lowerBound)...\(Self.notWornAlertRange.upperBound) s (or off)"))
        }
        for name in patterns.keys.sorted() {
            if AlarmSound(rawValue: name) == nil {
                p.append(ConfigProblem(Self.at(path, \.patterns) + [name], "unknown sound; known: \(AlarmSound.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
        }
        for name in ledPatterns.keys.sorted() {
            if StatusIndicator(rawValue: name) == nil {
                p.append(ConfigProblem(Self.at(path, \.ledPatterns) + [name], "unknown LED state; known: \(StatusIndicator.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
        }
        return p
    }
}

/// A buzzer or LED pattern: `{on-ms, off-ms, count, pause-ms}`; missing keys take 0 ms and a
/// count of 1.
extension OnOffPattern: KeyedSection {
    public init() { self.init(onMs: 0) }

    public static var keys: [ConfigKey<Self>] {
        [.value("on-ms", \.onMs, in: 0...600_000, unit: " ms"), .value("off-ms", \.offMs, in: 0...600_000, unit: " ms"),
         .value("count", \.count, in: 1...100), .value("pause-ms", \.pauseMs, in: 0...600_000, unit: " ms")]
    }
}
