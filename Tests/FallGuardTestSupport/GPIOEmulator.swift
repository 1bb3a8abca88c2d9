import FallGuardHardware
import Foundation
import Testing

/// The libgpiod a GPIO end-to-end test runs `fallguard` on: every such test runs once with each.
/// v1 is libgpiod 1.6 (`libgpiod.so.2`, Debian 12's `libgpiod2`); v2 is libgpiod 2.x
/// (`libgpiod.so.3`): the system's (Debian 13), else the bookworm-backports copy that
/// tools/setup-debian unpacks into $FALLGUARD_LIBGPIOD2_DIR (default
/// /var/cache/fallguard/libgpiod2), put on fallguard's LD_LIBRARY_PATH.
public enum GPIOLib: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case v1, v2

    public var testDescription: String { self == .v1 ? "libgpiod 1.6" : "libgpiod 2.x" }

    public static let copy = ProcessInfo.processInfo.environment["FALLGUARD_LIBGPIOD2_DIR"] ?? "/var/cache/fallguard/libgpiod2"

    /// Where libgpiod.so.3 comes from when the system has none; nil: the system's.
    public static let v2Directory: String? = {
        if (try? LibGPIOD2.load()) != nil { return nil }
        return FileManager.default.fileExists(atPath: copy + "/lib/libgpiod.so.3") ? copy + "/lib" : nil
    }()

    /// Why this library cannot be tested here, or nil.
    public var unavailable: String? {
        switch self {
        case .v1:
            return (try? LibGPIOD1.load()) == nil ? "libgpiod.so.2 (libgpiod 1.6, Debian package libgpiod2) is not installed" : nil
        case .v2:
            if (try? LibGPIOD2.load()) != nil || Self.v2Directory != nil { return nil }
            return "libgpiod.so.3 (libgpiod 2.x) is neither installed nor unpacked in \(Self.copy)/lib: run tools/setup-debian"
        }
    }

    /// Cancels the running test case when the library is missing, with a warning giving the
    /// reason (the console does not show a cancellation's comment).
    public func require() throws {
        guard let why = unavailable else { return }
        Issue.record(Comment(rawValue: "\(testDescription) not tested: \(why)"), severity: .warning)
        try Test.cancel(Comment(rawValue: why))
    }

    /// fallguard's environment: LD_LIBRARY_PATH to the unpacked 2.x for v2.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        if self == .v2, let dir = Self.v2Directory {
            env["LD_LIBRARY_PATH"] = dir + (env["LD_LIBRARY_PATH"].map { ":" + $0 } ?? "")
        }
        return env
    }
}

/// Runs `fallguard` inside the project's GPIO emulator (tools/gpio-emulator/gpio-emu), so the
/// real libgpiod 1.6 drives emulated lines; the test presses the button through the control
/// socket and reads every output level change, with its CLOCK_MONOTONIC time, from the log.
/// @unchecked: the captured output is guarded by `lock`; the rest is set in `init`.
public final class GPIOEmulatorRun: @unchecked Sendable {
    public static let skipReason: Comment = "needs root: the GPIO emulator makes /dev/gpiochip0 and a fake sysfs in a private mount namespace (tools/emu-ns)"

    static let launcher = """
        import os, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(s, signal.SIG_DFL)
        os.execv(sys.argv[1], sys.argv[1:])
        """

    public let dir: String
    public let control: String
    public let logPath: String
    private let process = Process()
    private let out = Pipe(), err = Pipe()
    private var stdoutData = Data()
    private var stderrData = Data()
    private let lock = NSLock()
    private var readers: [Thread] = []

    /// Starts `fallguard ARGS` under `gpio-emu CHIP_ARGS` (and `WRAPPER -- ` before fallguard,
    /// e.g. the IIO emulator), with `library` loadable (the arguments force it where needed).
    public init(_ arguments: [String], emulator: [String] = [], wrapper: [String] = [], library: GPIOLib = .v1) throws {
        try library.require()
        dir = NSTemporaryDirectory() + "fg-gpio-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        control = dir + "/ctl.sock"
        logPath = dir + "/gpio.jsonl"
        // Through a launcher that unblocks and un-ignores every signal: Process starts children
        // with the spawning thread's blocked mask, and gpio-emu stops its server with SIGTERM.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.launcher, Emulator.root + "/tools/gpio-emulator/gpio-emu"] + emulator + ["--control", control, "--log", logPath, "--"] + wrapper + [Emulator.fallguard] + arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.environment = library.environment
        try process.run()
        for (pipe, isOut) in [(out, true), (err, false)] {
            let t = Thread { [self] in
                let h = pipe.fileHandleForReading
                while true {
                    let d = h.availableData
                    if d.isEmpty { break }
                    lock.withLock { if isOut { stdoutData.append(d) } else { stderrData.append(d) } }
                }
            }
            t.start()
            readers.append(t)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    public var stdout: String { lock.withLock { String(decoding: stdoutData, as: UTF8.self) } }
    public var stderr: String { lock.withLock { String(decoding: stderrData, as: UTF8.self) } }

    /// stdout's JSON lines.
    public var events: [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits until a stdout JSON line has `event == name` (or the process ends).
    @discardableResult
    public func waitFor(_ name: String, count: Int = 1, timeout: Double = 30) -> [String: Any]? {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            let found = events.filter { $0["event"] as? String == name }
            if found.count >= count { return found[count - 1] }
            if !process.isRunning { break }
            usleep(10_000)
        }
        return nil
    }

    /// Waits until standard error contains `text` (the daemon's log); false at the timeout or
    /// when the process ends first.
    public func waitForLog(_ text: String, timeout: Double = 30) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if stderr.contains(text) { return true }
            if !process.isRunning { return stderr.contains(text) }
            usleep(10_000)
        }
        return false
    }

    /// One control command; returns the reply line.
    @discardableResult
    public func ctl(_ command: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Emulator.root + "/tools/gpio-emulator/gpio-ctl")
        p.arguments = ["-s", control] + command.split(separator: " ").map(String.init)
        let o = Pipe()
        p.standardOutput = o
        try p.run()
        let data = o.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits for the end; returns the exit status.
    public func wait() -> Int32 {
        process.waitUntilExit()
        while readers.contains(where: { !$0.isFinished }) { usleep(1000) }
        return process.terminationStatus
    }

    /// `(t_ns, physical value)` of every level change of output `offset`, from the log.
    public func levels(offset: Int) throws -> [(t: Int64, value: Int)] {
        try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let r = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  r["event"] as? String == "level", r["offset"] as? Int == offset,
                  let t = (r["t_ns"] as? NSNumber)?.int64Value, let v = r["value"] as? Int else { return nil }
            return (t, v)
        }
    }
}

extension GPIOEmulatorRun {
    /// `(t_ns, physical value)` of every level change of input `offset` (a press or release
    /// through the control socket), stamped by the emulator when it applied it.
    public func inputs(offset: Int) throws -> [(t: Int64, value: Int)] {
        try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let r = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  r["event"] as? String == "input", r["offset"] as? Int == offset,
                  let t = (r["t_ns"] as? NSNumber)?.int64Value, let v = r["value"] as? Int else { return nil }
            return (t, v)
        }
    }

    /// How long the emulator actually held input `offset` low (its first press to the next
    /// release, on its own clock), in ms: a `hold` is released by the emulator's timer, late
    /// under load.
    public func heldMs(offset: Int) throws -> Double? {
        let changes = try inputs(offset: offset)
        guard let press = changes.firstIndex(where: { $0.value == 0 }),
              let release = changes[press...].first(where: { $0.value == 1 }) else { return nil }
        return Double(release.t - changes[press].t) / 1e6
    }
}

extension Dictionary where Key == String, Value == Any {
    /// A nanosecond time field.
    public func ns(_ key: String) -> Int64? { (self[key] as? NSNumber)?.int64Value }
}
