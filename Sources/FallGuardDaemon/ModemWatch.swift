import FallGuardCore
import FallGuardMQTT
import FallGuardNotify
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The cellular modem of the `modem` channels (issue 36): asks ModemManager (``ModemManager``,
/// `mmcli`) every ``interval`` seconds how the modem is, for the status (`status.json`'s
/// `modem`, the page, `/metrics`, MQTT `<base>/modem`) and the problems; a problem that lasts
/// two checks (no SIM, PIN-locked, no signal or not registered, unplugged, ModemManager not
/// running) is told once as a device-problem alert through whatever still works, and its end
/// as a device-recovered one. Without a `modem` channel it asks nothing.
final class ModemWatch: Sendable {
    static let interval = 30.0
    let settings: @Sendable () -> NotificationSettings
    let tell: @Sendable (Alert) -> Void
    let published: @Sendable (DaemonStatus.Modem) -> Void
    let incidentPrefix: String, logger: Logger
    private let state = Mutex<(status: DaemonStatus.Modem?, seen: Int, told: String?)>((nil, 0, nil))

    init(settings: @escaping @Sendable () -> NotificationSettings, incidentPrefix: String, logger: Logger,
         tell: @escaping @Sendable (Alert) -> Void, published: @escaping @Sendable (DaemonStatus.Modem) -> Void) {
        (self.settings, self.incidentPrefix, self.logger, self.tell, self.published) = (settings, incidentPrefix, logger, tell, published)
    }

    /// The modem the channels use: the first `modem` channel's by name.
    var manager: ModemManager? {
        settings().channels.sorted { $0.key < $1.key }.lazy.compactMap { ($0.value as? ModemOptions)?.manager }.first
    }

    var status: DaemonStatus.Modem? { state.withLock { $0.status } }

    /// The problem for the health check; nil while the modem can send.
    var problem: String? {
        status?.problem.map { "modem: \($0); the modem's SMS and calls wait, the other channels go on" }
    }

    /// One look (modem service).
    func check() async {
        guard let manager else {
            state.withLock { $0 = (nil, 0, nil) }
            return
        }
        let now: DaemonStatus.Modem
        do {
            now = DaemonStatus.Modem(try await manager.status())
        } catch {
            now = DaemonStatus.Modem(problem: "\(error)")
        }
        let (changed, begins, ends) = state.withLock { s -> (Bool, String?, String?) in
            let changed = s.status != now
            // Failed checks in a row, whatever each said: a modem flapping between "searching"
            // and "idle" is still a modem that cannot send.
            s.seen = now.problem == nil ? 0 : s.seen + 1
            s.status = now
            let stamp = Int(Date().timeIntervalSince1970)
            if let problem = now.problem, s.seen >= 2, s.told == nil {
                s.told = "\(incidentPrefix)-modem-\(stamp)"
                return (changed, problem, nil)
            }
            if now.problem == nil, let told = s.told {
                s.told = nil
                return (changed, nil, told)
            }
            return (changed, nil, nil)
        }
        if changed { published(now) }
        if let begins {
            let incident = state.withLock { $0.told! }
            logger.warning("\(incident): modem: \(begins); the helpers are told (device-problem alert)")
            tell(Alert(kind: .deviceProblem, incident: incident, time: MonotonicClock.seconds(),
                       sensorFault: SensorFault(.modem, device: "modem", detail: begins)))
        }
        if let ends {
            logger.notice("\(ends): the modem can send again")
            tell(Alert(kind: .deviceRecovered, incident: ends, time: MonotonicClock.seconds(),
                       sensorFault: SensorFault(.modem, device: "modem", detail: "it can send again")))
        }
    }
}

extension DaemonStatus.Modem {
    init(_ s: ModemStatus) {
        self.init(state: s.state, signalPercent: s.signalPercent, registration: s.registration,
                  operatorName: s.operatorName.isEmpty ? nil : s.operatorName, problem: s.problem)
    }

    init(problem: String) {
        self.init(state: "unavailable", signalPercent: nil, registration: nil, operatorName: nil, problem: problem)
    }
}

extension MQTTModem {
    init(_ m: DaemonStatus.Modem) {
        self.init(state: m.state, signal: m.signalPercent, registration: m.registration, problem: m.problem)
    }
}

/// Looks at the modem every ``ModemWatch/interval`` seconds (one `mmcli` run of a few
/// milliseconds), only while a `modem` channel is configured.
struct ModemService: Service {
    let watch: ModemWatch

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await watch.check()
                do { try await Task.sleep(for: .seconds(watch.manager == nil ? 5 : ModemWatch.interval)) } catch { return }
            }
        }
    }
}
