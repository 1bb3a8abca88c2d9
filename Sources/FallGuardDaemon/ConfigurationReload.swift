import FallGuardConfig
import FallGuardFieldTest
import FallGuardSystemd
import Logging
import Synchronization

/// The configuration in force: read by the status and the page, replaced by a reload.
public final class CurrentConfiguration: Sendable {
    private let value: Mutex<DaemonConfiguration>

    public init(_ configuration: DaemonConfiguration) { value = Mutex(configuration) }

    public var now: DaemonConfiguration { value.withLock { $0 } }

    func replace(with configuration: DaemonConfiguration) { value.withLock { $0 = configuration } }
}

/// SIGHUP: the detector and the notifiers (contacts, wearer, templates, policy, channels
/// other than MQTT) take the new file at once; every other section (those that own hardware,
/// connections or the incident in progress: sensor, gpio, alarm, state, recording, speech,
/// metrics, web, log, and MQTT channels) needs a restart, and the log says which changed. A
/// file with errors changes nothing.
struct ConfigurationReload: Sendable {
    /// The sections a reload applies at once; every other section of ``DaemonFile`` that
    /// changed takes effect after a restart, and the log says so. (The notifier sections are
    /// not among `DaemonFile.keys`: `Notifiers.reload` decides for them.)
    static let appliedAtOnce: Set<String> = ["detector"]

    /// Of the changed sections, those that wait for a restart, in the file's order.
    static func needRestart(_ changed: [String]) -> [String] { changed.filter { !appliedAtOnce.contains($0) } }

    let current: CurrentConfiguration
    // What can take a new file while running.
    let loop: SensorLoop, recorder: FieldRecorder
    /// The notifiers take the new file (``Notifiers/reload(_:)``) and say what it changed.
    let reloadNotifiers: @Sendable (DaemonConfiguration) -> NotifierReload
    let systemd: SystemdNotifier?, logger: Logger

    func reload() {
        let configuration = current.now
        guard let path = configuration.path else {
            logger.notice("SIGHUP: the embedded demo has no file to reload")
            return
        }
        try? systemd?.reloading()
        defer { try? systemd?.ready(status: "monitoring") }
        let (new, diagnostics) = DaemonConfiguration.load(path: path)
        for d in diagnostics { logger.warning("\(new.redactor.redact(d.description))") }
        guard !diagnostics.contains(where: \.isError) else {
            logger.error("SIGHUP: \(path) has errors; still running with the configuration loaded before")
            return
        }
        if new.detector != configuration.detector, let d = try? new.detector.configuration() {
            loop.replaceDetector(d.makeDetector())
            recorder.detectorChanged(Daemon.detectorInfo(d))
            logger.notice("detector now \(d.label)")
        }
        // Every section the file declares (DaemonFile.keys), derived rather than listed: a new
        // section is reported after a reload without anyone remembering to add it here.
        var restart = Self.needRestart(new.file.keysChanged(since: configuration.file))
        var applied = new.detector != configuration.detector ? ["detector"] : []
        switch reloadNotifiers(new) {
        case .unchanged: break
        case let .applied(parts): applied += parts.map { "notifiers (\($0))" }
        case let .needsRestart(why): restart.append("notifiers (\(why))")
        }
        current.replace(with: new)
        logger.notice("SIGHUP: reloaded \(path)\(applied.isEmpty ? "" : "; now in effect: \(applied.joined(separator: ", "))")\(restart.isEmpty ? "" : "; changes to \(restart.joined(separator: ", ")) take effect after a restart")")
    }
}
