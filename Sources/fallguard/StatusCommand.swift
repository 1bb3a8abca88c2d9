import ArgumentParser
import FallGuardDaemon
import FallGuardConfig
import Foundation

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "What the running daemon is doing: state, sensor, last incident, outbox.",
        discussion: """
            Reads <state>/status.json, which `fallguard run` rewrites every second. Exit status 0 \
            when the daemon is monitoring and its sensor is healthy, 1 when it runs with a problem \
            (sensor fault, countdown or alert out, deliveries failed, alerts that cannot be stored, \
            an incident log that cannot be written, a stalled thread, the device not worn), 3 when it is not running \
            (no status, or none written for 5 s).
            """)

    @Option(help: ArgumentHelp("The state directory.", valueName: "dir"))
    var state = StateSection.defaultDirectory

    @Flag(help: "Print the status file as it is (JSON).")
    var json = false

    func run() throws {
        let path = DaemonStatus.path(in: state)
        let status: DaemonStatus
        do { status = try DaemonStatus.read(from: state) } catch {
            printError("not running: no status at \(path) (\(error.localizedDescription))")
            throw ExitCode(3)
        }
        let age = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
            .map { Date().timeIntervalSince($0) } ?? .infinity
        let running = age < 5 && Self.processExists(status.pid)
        if json {
            print(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self))
        } else {
            print(Self.text(status, age: age, running: running))
        }
        guard running else { throw ExitCode(3) }
        let healthy = status.state == "monitoring" && (status.sensor?.problems.isEmpty ?? false)
            && (status.outbox?.failed ?? 0) == 0 && (status.problems ?? []).isEmpty && status.notWorn == nil
            && status.power?.batteryLow != true && status.power?.shuttingDown != true
        if !healthy { throw ExitCode(1) }
    }

    /// `kill(pid, 0)`: 0 or EPERM (the daemon runs as another user, e.g. `fallguard` while a
    /// member of its group asks) both mean the process exists; only ESRCH means it does not.
    static func processExists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// `modem: registered, signal 80 %, home (Mock Mobile)`, or its problem.
    static func modemLine(_ m: DaemonStatus.Modem) -> String {
        var parts = [m.state]
        if let signal = m.signalPercent { parts.append("signal \(signal) %") }
        if let r = m.registration { parts.append(r + (m.operatorName.map { " (\($0))" } ?? "")) }
        return "modem: " + parts.joined(separator: ", ") + (m.problem.map { " — \($0)" } ?? "")
    }

    /// `power: battery BAT0 15 % (Discharging), mains offline since …, BATTERY LOW`.
    static func powerLine(_ p: DaemonStatus.Power) -> String {
        var parts = p.batteries.map { "battery \($0.name) \($0.capacity.map { "\($0) %" } ?? "?") (\($0.status))" }
        if let mains = p.mainsOnline {
            parts.append(mains ? "mains online" : "mains offline" + (p.onBatterySince.map { " since \($0): ON BATTERY" } ?? ""))
        }
        if p.shuttingDown { parts.append("SHUTTING DOWN: the battery is nearly empty") } else if p.batteryLow { parts.append("BATTERY LOW") }
        return "power: " + parts.joined(separator: ", ")
    }

    static func text(_ s: DaemonStatus, age: Double, running: Bool) -> String {
        var lines: [String] = []
        lines.append(running ? "fallguard \(s.version), pid \(s.pid), running since \(s.started)"
                             : "fallguard is NOT running (last status \(Int(age)) s old, pid \(s.pid))")
        var state = "state: \(s.state)"
        if let i = s.incident { state += ", incident \(i)" }
        if let r = s.countdownRemaining { state += String(format: ", %.1f s left to abort", r) }
        lines.append(state)
        if let n = s.notWorn {
            lines.append("NOT WORN since \(n.since) (\(n.incident)): only the sensor's own noise, falls cannot be detected"
                         + (n.reported ? "; the helpers were told" : ""))
        }
        for problem in s.problems ?? [] { lines.append("PROBLEM: \(problem)") }
        if let sensor = s.sensor {
            lines.append("sensor: \(sensor.device) at \(sensor.uri), \(sensor.mode), \(sensor.rate) Hz, "
                + (sensor.axes.map { "\($0), " } ?? "")
                + (sensor.problems.isEmpty ? "healthy" : "PROBLEM: \(sensor.problems.joined(separator: ", "))")
                + ", \(sensor.samples) samples, \(sensor.overruns) overruns")
        } else {
            lines.append("sensor: not open")
        }
        if let p = s.power { lines.append(powerLine(p)) }
        if let m = s.modem { lines.append(modemLine(m)) }
        if let last = s.lastIncident {
            var line = "last incident: \(last.id) (\(last.kind)) at \(last.at)"
            if last.delivered == true { line += ", delivered" }
            if let who = last.reachedBy { line += ", \(who) answered the call" }
            if let who = last.acknowledgedBy { line += ", acknowledged by \(who)" }
            if let at = last.presentAt { line += ", \(last.presentBy ?? "staff") at the bedside since \(at)" }
            if let at = last.resetAt { line += ", reset by \(last.resetBy ?? "staff") at \(at)" }
            lines.append(line)
        } else {
            lines.append("last incident: none since start")
        }
        if let o = s.outbox {
            lines.append("outbox: \(o.pending) pending, \(o.sent) sent, \(o.failed) failed"
                + (o.oldestPendingAge.map { String(format: ", oldest pending %.0f s", $0) } ?? "")
                + ((o.heldInMemory ?? 0) > 0 ? ", \(o.heldInMemory ?? 0) HELD IN MEMORY" : "")
                + ((o.quarantined ?? 0) > 0 ? ", \(o.quarantined ?? 0) quarantined (unreadable)" : ""))
        }
        lines.append("gpio: \(s.gpio ?? "none (console)")")
        if let r = s.recording {
            lines.append("recording: " + (r.file.map { "\($0), \(r.bytes / 1000) kB written" } ?? "off")
                         + ", \(r.dropped) samples dropped; \(r.incidents) incidents archived since start")
        }
        lines.append("configuration: \(s.configuration); status updated \(s.updated)")
        return lines.joined(separator: "\n")
    }
}
