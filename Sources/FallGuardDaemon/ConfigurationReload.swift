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
/// other than MQTT) take the new file at once; parts that own hardware, connections or the
/// incident in progress (sensor, gpio, alarm, state, recording, metrics, log, MQTT channels)
/// need a restart, and the log says which changed. A file with errors changes nothing.
struct ConfigurationReload: Sendable {
    let current: CurrentConfiguration
    // What can take a new file while running.
    let loop: SensorLoop, recorder: FieldRecorder, notifiers: Notifiers
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
        var restart: [String] = []
        if new.sensor != configuration.sensor { restart.append("sensor") }
        if new.gpio != configuration.gpio { restart.append("gpio") }
        if new.alarm != configuration.alarm { restart.append("alarm") }
        if new.state != configuration.state { restart.append("state") }
        if new.recording != configuration.recording { restart.append("recording") }
        if new.speech != configuration.speech { restart.append("speech") }
        if new.metrics != configuration.metrics { restart.append("metrics") }
        if new.log != configuration.log { restart.append("log") }
        var applied = new.detector != configuration.detector ? ["detector"] : []
        switch notifiers.reload(new) {
        case .unchanged: break
        case let .applied(parts): applied += parts.map { "notifiers (\($0))" }
        case let .needsRestart(why): restart.append("notifiers (\(why))")
        }
        current.replace(with: new)
        logger.notice("SIGHUP: reloaded \(path)\(applied.isEmpty ? "" : "; now in effect: \(applied.joined(separator: ", "))")\(restart.isEmpty ? "" : "; changes to \(restart.joined(separator: ", ")) take effect after a restart")")
    }
}
