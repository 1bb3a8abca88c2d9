import FallGuardCore
import FallGuardHardware
import Foundation
import Logging
import ServiceLifecycle

/// The daemon's notifier side: the sink the alarm hands alerts to, the services that deliver
/// them, and what the status shows of them.
final class Notifiers: @unchecked Sendable {
    // @unchecked: `last` is guarded by `lock`.
    let sink: any AlertSink
    let services: [any Service]
    let summary: String
    private let lock = NSLock()
    private var last: DaemonStatus.Incident?

    init(configuration: DaemonConfiguration, logger: Logger) throws(DaemonStartError) {
        sink = ConsoleAlertSink()
        services = []
        summary = "console"
    }

    /// After every batch of engine effects (alarm thread).
    func engineChanged(_ engine: AlertEngine, _ effects: [AlertEffect]) {
        for case let .dispatch(alert) in effects {
            lock.withLock { last = .init(id: alert.incident, kind: alert.kind.rawValue, at: isoTimestamp()) }
        }
    }

    func reload(_ configuration: DaemonConfiguration) {}

    func outboxStatus() -> DaemonStatus.Outbox? { nil }

    var lastIncident: DaemonStatus.Incident? { lock.withLock { last } }
}
