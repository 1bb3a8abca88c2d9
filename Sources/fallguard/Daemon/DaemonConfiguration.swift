import FallGuardConfig
import FallGuardCore
import Foundation

/// Every section `fallguard run` reads, from one YAML file or the embedded demo defaults.
struct DaemonConfiguration: Sendable {
    /// The file's path, or nil for the embedded demo.
    var path: String?
    var sensor = SensorSection()
    var detector = DetectorSection()
    var alarm = AlarmSection()
    var gpio = GPIOSection()
    var state = StateSection()
    var metrics = MetricsSection()
    var log = LogSection()
    var notify = NotifySections()
    var redactor = SecretRedactor()
    /// The demo on a machine that has an accelerometer: the sensor instead of the recording.
    var liveDemo = false

    /// Where the daemon's files go: the configured directory, or for the demo
    /// `$XDG_STATE_HOME/fallguard` (else `~/.local/state/fallguard`).
    var stateDirectory: String { state.directory }

    var label: String { path ?? (liveDemo ? "embedded demo (live sensor)" : "embedded demo") }

    /// Reads `path` and collects every problem (file:line: key: message).
    static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (DaemonConfiguration, [ConfigDiagnostic]) {
        var doc = ConfigDocument.load(path: path, environment: environment)
        var c = DaemonConfiguration(path: path)
        c.sensor = doc.section(SensorSection.self, at: "sensor") ?? c.sensor
        c.detector = doc.section(DetectorSection.self, at: "detector") ?? c.detector
        c.alarm = doc.section(AlarmSection.self, at: "alarm") ?? c.alarm
        c.gpio = doc.section(GPIOSection.self, at: "gpio") ?? c.gpio
        c.state = doc.section(StateSection.self, at: "state") ?? c.state
        c.metrics = doc.section(MetricsSection.self, at: "metrics") ?? c.metrics
        c.log = doc.section(LogSection.self, at: "log") ?? c.log
        c.notify = NotifySections.read(from: &doc)
        let diagnostics = doc.finish()
        c.redactor = doc.redactor
        return (c, diagnostics)
    }

    /// No file: the no-hardware demo. The bundled real fall replayed as the sensor, the console
    /// as buzzer, LED and button, a console notifier behind the local outbox.
    static func demo(environment: [String: String] = ProcessInfo.processInfo.environment) -> DaemonConfiguration {
        var c = DaemonConfiguration(path: nil)
        c.gpio.enabled = false
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/state"
        c.state.directory = base + "/fallguard"
        c.notify = NotifySections.demo
        return c
    }
}
