import FallGuardCore
import Foundation

/// Something a ``PatternPlayer`` switches on and off: a GPIO line, a tone, a console display.
/// Called from the player's thread only.
public protocol LevelOutput: AnyObject, Sendable {
    func set(_ on: Bool) throws(GPIOError)
    /// Leaves the output off and gives up its resources (threads, PWM).
    func shutdown()
}

extension LevelOutput {
    public func shutdown() { try? set(false) }
}

/// A GPIO line as a level output (active buzzer, LED).
public final class LineOutput: LevelOutput, @unchecked Sendable {
    // @unchecked: only the player thread touches the line.
    public let line: any GPIOOutputLine
    public init(_ line: any GPIOOutputLine) { self.line = line }
    public func set(_ on: Bool) throws(GPIOError) { try line.set(on) }
}

/// A passive buzzer driven by toggling its GPIO line at `frequency` while on, on an absolute
/// CLOCK_MONOTONIC schedule from its own thread.
public final class ToggledTone: LevelOutput, @unchecked Sendable {
    // @unchecked: `on` and `running` are guarded by `condition`; the line by the tone thread.
    private let line: any GPIOOutputLine
    private let halfPeriod: Int64
    private let condition = MonotonicCondition()
    private var on = false
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    public init(_ line: any GPIOOutputLine, frequency: Double) {
        self.line = line
        halfPeriod = max(25_000, Int64(saturating: (0.5e9 / frequency).rounded()))   // checked: 20...20000 Hz
        _ = startThread(name: "fallguard-tone", realTime: true) { [self] in loop() }
    }

    public func set(_ on: Bool) throws(GPIOError) {
        condition.withLock {
            self.on = on
            condition.signal()
        }
    }

    public func shutdown() {
        condition.withLock {
            running = false
            condition.signal()
        }
        done.wait()
    }

    private func loop() {
        defer { done.signal() }
        var level = false
        var next: Int64 = 0
        while true {
            let (keepOn, keepRunning) = condition.withLock { () -> (Bool, Bool) in
                if !on, running { condition.wait(until: nil) }
                return (on, running)
            }
            guard keepRunning else { break }
            if !keepOn {
                if level { try? line.set(false); level = false }
                continue
            }
            let now = MonotonicClock.nanoseconds()
            if next < now - halfPeriod { next = now }  // just switched on: start the wave now
            level.toggle()
            try? line.set(level)
            next += halfPeriod
            MonotonicClock.sleep(until: next)
        }
        try? line.set(false)
    }
}

/// A passive buzzer on a hardware PWM channel (`/sys/class/pwm/pwmchipN/pwmM`): 50 % duty at
/// `frequency`, enabled while on.
public final class PWMTone: LevelOutput, @unchecked Sendable {
    // @unchecked: used from the player thread only.
    public let channelPath: String

    /// Exports the channel if needed and sets its period; throws naming the sysfs file.
    public init(chip: Int, channel: Int, frequency: Double, sysfsRoot: String = "/sys/class/pwm") throws(GPIOError) {
        let chipPath = "\(sysfsRoot)/pwmchip\(chip)"
        channelPath = "\(chipPath)/pwm\(channel)"
        if !FileManager.default.fileExists(atPath: channelPath) {
            try Self.write("\(channel)", to: "\(chipPath)/export")
            for _ in 0..<50 where !FileManager.default.fileExists(atPath: channelPath) { usleep(10_000) }  // udev
        }
        let period = Int64(saturating: (1e9 / frequency).rounded())
        try? Self.write("0", to: "\(channelPath)/enable")
        try Self.write("\(period)", to: "\(channelPath)/period")
        try Self.write("\(period / 2)", to: "\(channelPath)/duty_cycle")
    }

    public func set(_ on: Bool) throws(GPIOError) {
        try Self.write(on ? "1" : "0", to: "\(channelPath)/enable")
    }

    static func write(_ value: String, to path: String) throws(GPIOError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw GPIOError("pwm: cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let n = value.withCString { Glibc.write(fd, $0, strlen($0)) }
        guard n >= 0 else { throw GPIOError("pwm: cannot write \(value) to \(path): \(String(cString: strerror(errno)))") }
    }
}
