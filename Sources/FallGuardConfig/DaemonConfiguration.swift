import FallGuardConfigKeys
import FallGuardCore
import FallGuardNotify
import Foundation

/// Every section `fallguard run` reads, from one YAML file or the embedded demo defaults;
/// `configuration.sensor`, `.alarm`, … are the file's sections.
@dynamicMemberLookup
public struct DaemonConfiguration: Sendable {
    /// The file's path, or nil for the embedded demo.
    public var path: String?
    public var file = DaemonFile()
    public var redactor = SecretRedactor()
    /// The demo on a machine that has an accelerometer: the sensor instead of the recording.
    public var liveDemo = false

    public init(path: String?) { self.path = path }

    public subscript<T>(dynamicMember keyPath: WritableKeyPath<DaemonFile, T>) -> T {
        get { file[keyPath: keyPath] }
        set { file[keyPath: keyPath] = newValue }
    }

    /// Where the daemon's files go: the configured directory, or for the demo
    /// `$XDG_STATE_HOME/fallguard` (else `~/.local/state/fallguard`).
    public var stateDirectory: String { file.state.directory }

    public var label: String { path ?? (liveDemo ? "embedded demo (live sensor)" : "embedded demo") }

    /// Reads `path` and collects every problem (file:line: key: message).
    public static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (DaemonConfiguration, [ConfigDiagnostic]) {
        load(ConfigDocument.load(path: path, environment: environment))
    }

    /// The same from the file's text, as if read from `path` (what `fuzz/` feeds).
    public static func load(yaml: String, path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (DaemonConfiguration, [ConfigDiagnostic]) {
        load(ConfigDocument(yaml: yaml, path: path, environment: environment))
    }

    private static func load(_ document: ConfigDocument) -> (DaemonConfiguration, [ConfigDiagnostic]) {
        var doc = document
        var c = DaemonConfiguration(path: doc.path)
        if let file = doc.decodeWhole(DaemonFile.self) { c.file = file }
        let diagnostics = doc.finish()
        c.redactor = doc.redactor
        // Secret by nature though under no secret-sounding key: webhook ids, ntfy topics.
        c.redactor.add(contentsOf: c.notify.settings?.secrets ?? [])
        return (c, diagnostics)
    }

    /// What `check-config` and `run` say of a file that names no channel (nil when it names
    /// one, and for the demo): a warning, since the bridge protects locally all the same.
    public var nobodyWillBeToldWarning: ConfigDiagnostic? {
        guard let path, file.notify.nobodyWillBeTold else { return nil }
        return ConfigDiagnostic(file: path, line: nil,
                                problem: ConfigProblem(["channels"], NotifySections.nobodyWillBeToldMessage, severity: .warning))
    }

    /// No file: the no-hardware demo. The bundled real fall replayed as the sensor, the console
    /// as buzzer, LED and button, a console notifier behind the local outbox.
    public static func demo(environment: [String: String] = ProcessInfo.processInfo.environment) -> DaemonConfiguration {
        var c = DaemonConfiguration(path: nil)
        c.gpio.enabled = false
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/state"
        c.state.directory = base + "/fallguard"
        c.notify = NotifySections.demo
        return c
    }
}
