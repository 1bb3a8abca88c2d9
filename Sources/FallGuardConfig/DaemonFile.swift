import FallGuardCore
import FallGuardNotify

/// The notifier sections at the top of the file: `device`, `wearer`, `contacts`, `channels`,
/// `policy`, `templates`. A file without `wearer`, `contacts` and `channels` has no notifiers
/// configured: alerts then go to the console (and the outbox), as in the demo.
public struct NotifySections: Sendable {
    /// nil: none configured.
    public var settings: NotificationSettings?

    public init(settings: NotificationSettings? = nil) { self.settings = settings }

    public static let keys = NotificationSettings.CodingKeys.allCases.map(\.rawValue)

    /// Console only: every alert kind broadcast to the `console` channel.
    public static func consoleOnly(wearer: String = "the wearer") -> NotificationSettings {
        let console = AlertRoute(primary: [], broadcast: ["console"])
        return NotificationSettings(
            wearer: Wearer(name: wearer), contacts: [], channels: ["console": ConsoleOptions()],
            policy: NotificationPolicy(fall: console, helpRequested: console, resolved: console,
                                       deviceProblem: console, heartbeat: console))
    }

    public static let demo = NotifySections(settings: consoleOnly(wearer: "Demo Wearer"))

    /// What the daemon uses: the configured settings, else console only.
    public var effective: NotificationSettings { settings ?? Self.consoleOnly() }
}

/// The whole file as one value, so that unknown keys are found at every level, including the
/// top (a misspelt section name). Each section keeps its own defaults and checks.
public struct DaemonFile: ConfigSection, Codable {
    public var sensor = SensorSection()
    public var detector = DetectorSection()
    public var alarm = AlarmSection()
    public var gpio = GPIOSection()
    public var state = StateSection()
    public var recording = RecordingSection()
    public var speech = SpeechSection()
    public var metrics = MetricsSection()
    public var web = WebSection()
    public var log = LogSection()
    public var notify = NotifySections()

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        func section<T: Decodable>(_ key: String, _ fallback: T) throws -> T {
            try c.decodeIfPresent(T.self, forKey: Key(key)) ?? fallback
        }
        sensor = try section("sensor", sensor)
        detector = try section("detector", detector)
        alarm = try section("alarm", alarm)
        gpio = try section("gpio", gpio)
        state = try section("state", state)
        recording = try section("recording", recording)
        speech = try section("speech", speech)
        metrics = try section("metrics", metrics)
        web = try section("web", web)
        log = try section("log", log)
        if NotifySections.keys.contains(where: { c.contains(Key($0)) }) {
            notify.settings = try NotificationSettings(fromConfig: decoder)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(sensor, forKey: Key("sensor"))
        try c.encode(detector, forKey: Key("detector"))
        try c.encode(alarm, forKey: Key("alarm"))
        try c.encode(gpio, forKey: Key("gpio"))
        try c.encode(state, forKey: Key("state"))
        try c.encode(recording, forKey: Key("recording"))
        try c.encode(speech, forKey: Key("speech"))
        try c.encode(metrics, forKey: Key("metrics"))
        try c.encode(web, forKey: Key("web"))
        try c.encode(log, forKey: Key("log"))
        try notify.settings?.encodeConfig(to: encoder)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        // The loader checks only the value it decodes (the whole file): gather every section's.
        // (A list, not one chain of `+`: Swift 6.2 gives up type-checking the chain.)
        let sections: [[ConfigProblem]] = [
            sensor.problems(at: path + ["sensor"]), detector.problems(at: path + ["detector"]),
            alarm.problems(at: path + ["alarm"]), gpio.problems(at: path + ["gpio"]),
            state.problems(at: path + ["state"]), recording.problems(at: path + ["recording"]),
            speech.problems(at: path + ["speech"]), metrics.problems(at: path + ["metrics"]),
            web.problems(at: path + ["web"]), webAccessProblems(at: path),
            log.problems(at: path + ["log"]), notify.settings?.problems(at: path) ?? [],
        ]
        return sections.flatMap { $0 }
    }

    /// The page and the metrics share one server at `metrics.listen`: who may reach it.
    public func webAccessProblems(at path: [String]) -> [ConfigProblem] {
        guard metrics.enabled || web.enabled, let (host, _) = metrics.address else { return [] }
        return web.accessProblems(listenHost: host, at: path + ["web"])
    }
}
