import FallGuardConfigKeys
import FallGuardCore
import FallGuardNotify

/// The notifier sections at the top of the file: `device`, `wearer`, `contacts`, `channels`,
/// `policy`, `templates`.
///
/// **Nobody will be told** (the shipped file, issue 39): a file that configures no channel (no
/// `channels:`, or an empty one) starts and protects locally (sensor, buzzer, button, page),
/// its alerts go to the console (the journal) through the outbox, and it says everywhere that
/// nobody will be told (``nobodyWillBeTold``; `check-config` and `run` warn:
/// ``DaemonConfiguration/nobodyWillBeToldWarning``). A channel that is there but broken (a `${VAR}`
/// not set, a bad URL) is an error, as any malformed key: exit status 78.
public struct NotifySections: Sendable {
    /// nil: none configured.
    public var settings: NotificationSettings?

    public init(settings: NotificationSettings? = nil) { self.settings = settings }

    public static let keys = NotificationSettings.keys.map(\.name)

    /// Console only: every alert kind broadcast to the `console` channel.
    public static func consoleOnly(wearer: String = "the wearer") -> NotificationSettings {
        let console = AlertRoute(primary: [], broadcast: ["console"])
        return NotificationSettings(
            wearer: Wearer(name: wearer), contacts: [], channels: ["console": ConsoleOptions()],
            policy: NotificationPolicy(fall: console, helpRequested: console, resolved: console,
                                       deviceProblem: console, heartbeat: console))
    }

    public static let demo = NotifySections(settings: consoleOnly(wearer: "Demo Wearer"))

    /// What the daemon uses: the configured settings; with no channel, console only (the
    /// wearer, device and templates of the file kept).
    public var effective: NotificationSettings {
        guard let settings else { return Self.consoleOnly() }
        guard settings.channels.isEmpty else { return settings }
        var console = Self.consoleOnly(wearer: settings.wearer.name.isEmpty ? "the wearer" : settings.wearer.name)
        (console.device, console.templates) = (settings.device, settings.templates)
        return console
    }

    /// The file configures no channel: alerts reach the console (the journal) only. (The demo,
    /// which has no file, names its console channel: it tells what it shows.)
    public var nobodyWillBeTold: Bool { settings?.channels.isEmpty ?? true }

    /// What the status, the page, the journal and `check-config` say while ``nobodyWillBeTold``.
    public static let nobodyWillBeToldMessage = "no channel: nobody will be told of a fall or a call for help until a channel is configured (the buzzer, the button and the page work; a webhook such as ntfy, e-mail and MQTT need no paid account, SMS and calls a Twilio account)"
}

/// The whole file as one value, so that unknown keys are found at every level, including the
/// top (a misspelt section name). Each section keeps its own keys, defaults and checks; the
/// notifier sections stand at the top level beside them.
public struct DaemonFile: KeyedSection, Codable {
    public var sensor = SensorSection()
    public var detector = DetectorSection()
    public var alarm = AlarmSection()
    public var gpio = GPIOSection()
    public var state = StateSection()
    public var recording = RecordingSection()
    public var speech = SpeechSection()
    public var power = PowerSection()
    public var metrics = MetricsSection()
    public var web = WebSection()
    public var log = LogSection()
    public var notify = NotifySections()

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.section("sensor", \.sensor), .section("detector", \.detector), .section("alarm", \.alarm), .section("gpio", \.gpio),
         .section("state", \.state), .section("recording", \.recording), .section("speech", \.speech),
         .section("power", \.power),
         .section("metrics", \.metrics), .section("web", \.web), .section("log", \.log)]
    }

    /// Its sections' names and the notifier sections' (`device`, `wearer`, `channels`, ...).
    public static var keyNames: [String] { keys.map(\.name) + NotifySections.keys }

    public init(from decoder: any Decoder) throws {
        self = try DaemonFile(keysFrom: decoder)
        let c = try decoder.container(keyedBy: ConfigKeyName.self)
        if NotifySections.keys.contains(where: { c.contains(ConfigKeyName($0)) }) {
            notify.settings = try NotificationSettings(fromConfig: decoder)
        }
    }

    public init(fromConfig decoder: any Decoder) throws { try self.init(from: decoder) }

    public func encode(to encoder: any Encoder) throws {
        try encodeKeys(to: encoder)
        try notify.settings?.encodeConfig(to: encoder)
    }

    public func encodeConfig(to encoder: any Encoder) throws { try encode(to: encoder) }

    /// Beyond each section's own: who may reach the page, and the notifier sections.
    public func checks(at path: [String]) -> [ConfigProblem] {
        webAccessProblems(at: path) + (notify.settings?.problems(at: path) ?? [])
    }

    /// The page and the metrics share one server at `metrics.listen`: who may reach it.
    public func webAccessProblems(at path: [String]) -> [ConfigProblem] {
        guard metrics.enabled || web.enabled, let (host, _) = metrics.address else { return [] }
        return web.accessProblems(listenHost: host, at: Self.at(path, \.web))
    }
}
