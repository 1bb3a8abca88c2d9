import FallGuardCore
import FallGuardHardware
import Foundation
import Synchronization

/// The no-hardware demo's buzzer and LED: one status line on standard error, redrawn ten
/// times a second when it is a terminal, e.g.
/// `FG-1 COUNTDOWN 23.4 s  buzzer ■ countdown (200/800 ms ×1)  LED ●  Enter: short press …`.
/// Without a terminal, one line per change of sound.
public final class ConsoleAlarmDisplay: Sendable {
    public let buzzer = ConsoleLevel()
    public let led = ConsoleLevel()
    private let patterns: AlarmPatterns
    private let shown = Mutex<(engine: AlertEngine?, running: Bool)>((nil, false))
    private let isTerminal = isatty(2) == 1
    private let done = DispatchSemaphore(value: 0)

    public init(patterns: AlarmPatterns) { self.patterns = patterns }

    public func start(_ controller: AlarmController) {
        let engine = controller.snapshot
        shown.withLock { $0 = (engine, true) }
        guard isTerminal else { return }
        Thread { [self] in
            defer { done.signal() }
            while shown.withLock({ $0.running }) {
                FileHandleStderr.write("\r\u{1B}[K" + statusLine())
                usleep(100_000)
            }
            FileHandleStderr.write("\r\u{1B}[K")
        }.start()
    }

    public func stop() {
        let was = shown.withLock { s -> Bool in defer { s.running = false }; return s.running }
        if was, isTerminal { done.wait() }
    }

    public func update(_ engine: AlertEngine, _ effects: [AlertEffect]) {
        shown.withLock { $0.engine = engine }
        guard !isTerminal else {
            for case let .record(e) in effects {
                FileHandleStderr.write("\r\u{1B}[K\(e.incident ?? "-") \(e.event.rawValue): \(e.detail)\n")
            }
            for case let .dispatch(a) in effects {
                FileHandleStderr.write("\r\u{1B}[K\(a.incident) ALERT SENT: \(a.kind.rawValue) (\(a.severity.rawValue))\n")
            }
            return
        }
        for case let .sound(s) in effects { FileHandleStderr.write("buzzer: \(s.rawValue) (\(patterns.pattern(for: s)))\n") }
    }

    func statusLine() -> String {
        guard let e = shown.withLock({ $0.engine }) else { return "" }
        let now = MonotonicClock.seconds()
        var text: String
        switch e.state {
        case .monitoring: text = "monitoring"
        case let .countdown(c): text = "\(c.incident) COUNTDOWN \(String(format: "%.1f", c.remaining(at: now))) s"
        case let .alertActive(a):
            text = "\(a.incident) ALERT OUT (\(a.kind.rawValue))"
            if a.delivered { text += ", SENT" }
            if let who = a.reachedBy { text += ", \(who) answered" }
            text += " — press for I'm OK"
        }
        if let f = e.sensorFault { text += "  SENSOR FAULT \(f.fault.problem.rawValue)" }
        text += "  buzzer \(buzzer.isOn ? "■" : "□") \(e.sound.rawValue) (\(patterns.pattern(for: e.sound)))"
        text += "  LED \(led.isOn ? "●" : "○")  \(ConsoleButton.help)"
        return text
    }
}
