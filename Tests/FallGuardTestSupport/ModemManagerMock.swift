import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The ModemManager mock template (python-dbusmock, with Messaging and Voice).
public let modemMockTemplate = repositoryRoot + "/tools/modem-mock/modemmanager.py"

/// Why the modem tests cannot run here, nil when they can (`tools/setup-debian` installs
/// `modemmanager` for `mmcli`, `python3-dbusmock` and `dbus-daemon`).
public let modemMockMissing: String? = {
    for tool in ["/usr/bin/mmcli", "/usr/bin/dbus-daemon", "/usr/bin/dbus-send"] where !FileManager.default.isExecutableFile(atPath: tool) {
        return "\(tool) is not installed (apt install modemmanager dbus-daemon)"
    }
    if !FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock/__init__.py") {
        return "python3-dbusmock is not installed (apt install python3-dbusmock)"
    }
    return nil
}()

/// Every mock's processes, killed when the test process exits (a mock a test kept alive to
/// its end must not outlive the run).
private let mockProcesses = Mutex<Set<pid_t>>([])
private let killMocksAtExit: Void = { _ = atexit { mockProcesses.withLock { for pid in $0 { kill(pid, SIGKILL) } } } }()

/// A private D-Bus daemon with the ModemManager mock on it: the real `mmcli` talks to it when
/// given ``address`` as `DBUS_SYSTEM_BUS_ADDRESS`. Stopped (SIGKILL) when released.
/// @unchecked: the processes are set once in `init` and only killed afterwards.
public final class ModemManagerMock: @unchecked Sendable {
    public let folder = temporaryFolder("modem-mock")
    public var address: String { "unix:path=\(folder)/bus" }
    private var bus: Process?
    private var mock: Process?

    /// - Parameter sim: `present`, `missing` or `pin`; `signal` in percent; `registration`
    ///   `home`, `roaming`, `searching`, `idle` or `denied`.
    ///   `pin2` is registered with PIN2 still listed (as Quectel modems report); `enabled: false`
    ///   is a modem ModemManager keeps disabled until `Modem.Enable(true)`.
    public init(sim: String = "present", signal: Int = 80, registration: String = "home", enabled: Bool = true) throws {
        _ = killMocksAtExit
        let b = Process()
        b.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        b.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
        b.standardError = FileHandle.nullDevice
        try b.run()
        bus = b
        mockProcesses.withLock { _ = $0.insert(b.processIdentifier) }
        guard waitFor({ FileManager.default.fileExists(atPath: "\(self.folder)/bus") }) else { throw BrokerError("dbus-daemon did not start") }
        let m = Process()
        m.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        m.arguments = ["-m", "dbusmock", "--system", "-t", modemMockTemplate, "-p",
                       #"{"sim": "\#(sim)", "signal": \#(signal), "registration": "\#(registration)", "enabled": \#(enabled)}"#]
        m.environment = ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"]
        m.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        FileManager.default.createFile(atPath: folder + "/mock.log", contents: nil)
        m.standardError = FileHandle(forWritingAtPath: folder + "/mock.log")
        try m.run()
        mock = m
        mockProcesses.withLock { _ = $0.insert(m.processIdentifier) }
        guard waitFor({ (try? self.mmcli(["-L", "-J"]))?.contains("Modem/0") ?? false }) else {
            throw BrokerError("the ModemManager mock did not start: \(log)")
        }
    }

    deinit { stop() }

    public func stop() {
        for p in [mock, bus].compactMap({ $0 }) where p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }

    /// Stops the mock only: the bus stays, without ModemManager on it.
    public func stopModemManager() {
        if let m = mock, m.isRunning {
            kill(m.processIdentifier, SIGKILL)
            m.waitUntilExit()
        }
    }

    public var log: String { (try? String(contentsOfFile: folder + "/mock.log", encoding: .utf8)) ?? "" }

    /// Runs the real `mmcli` on this bus.
    public func mmcli(_ arguments: [String]) throws -> String {
        try runCommand("/usr/bin/mmcli", arguments, environment: ["DBUS_SYSTEM_BUS_ADDRESS": address]).checkedOutput("mmcli")
    }

    /// Calls a control method of the mock (`org.freedesktop.DBus.Mock`) with `dbus-send` arguments.
    @discardableResult
    public func control(_ method: String, _ arguments: [String] = []) throws -> String {
        try run("/usr/bin/dbus-send", ["--bus=\(address)", "--print-reply", "--dest=org.freedesktop.ModemManager1",
                                       "/org/freedesktop/ModemManager1", "org.freedesktop.DBus.Mock.\(method)"] + arguments)
    }

    /// The modem's state: `sim` (present, missing, pin), `signal`, `registration`.
    public func set(sim: String? = nil, signal: Int? = nil, registration: String? = nil) throws {
        var entries: [String] = []
        if let sim { entries += ["sim", sim] }
        if let signal { entries += ["signal", "\(signal)"] }
        if let registration { entries += ["registration", registration] }
        // dbus-send's dict syntax: dict:string:variant is not allowed, so each value goes as a string.
        try control("SetModem", ["dict:string:string:" + entries.joined(separator: ",")])
    }

    public func unplug() throws { try control("Unplug") }
    public func plug() throws { try control("Plug") }
    public func callOutcome(_ outcome: String) throws { try control("SetCallOutcome", ["string:\(outcome)"]) }
    /// An SMS from `number` arrives.
    public func receive(from number: String, _ text: String) throws { try control("ReceiveSms", ["string:\(number)", "string:\(text)"]) }
    /// An SMS whose network time stamp is `unixTime` (a bridge clock behind the network's).
    public func receive(from number: String, _ text: String, stampedAt unixTime: Double) throws {
        try control("ReceiveSmsAt", ["string:\(number)", "string:\(text)", "double:\(unixTime)"])
    }

    /// The SMS the modem sent, from the mock's own log (the channel deletes each SMS from
    /// ModemManager's list once it is sent): (number, text).
    public func sentSMS() throws -> [(number: String, text: String)] {
        let reply = try control("SentJson")
        guard let start = reply.range(of: "string \""), let end = reply.range(of: "\"", options: .backwards),
              start.upperBound <= end.lowerBound,
              let log = try JSONSerialization.jsonObject(with: Data(reply[start.upperBound..<end.lowerBound].utf8)) as? [[Any]]
        else { throw BrokerError("the mock's SentJson: \(reply.prefix(300))") }
        return log.compactMap { entry in
            guard entry.count == 4, entry[0] as? String == "sms" else { return nil }
            return (entry[1] as? String ?? "", entry[2] as? String ?? "")
        }
    }

    /// The calls the modem made: (number, state).
    public func calls() throws -> [(number: String, state: String)] {
        let list = try json(["-m", "0", "--voice-list-calls"])["modem.voice.call"] as? [String] ?? []
        return try list.map { path in
            let p = (try json(["-o", path])["call"] as? [String: Any])?["properties"] as? [String: Any]
            return (p?["number"] as? String ?? "", p?["state"] as? String ?? "")
        }
    }

    private func json(_ arguments: [String]) throws -> [String: Any] {
        let text = try mmcli(arguments + ["-J"])
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    private func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return false
    }
}

extension CommandResult {
    /// Standard output when it exited 0, else an error with what it said.
    func checkedOutput(_ what: String) throws -> String {
        guard status == 0 else { throw BrokerError("\(what) exited \(status): \(stderr)\(stdout)") }
        return stdout
    }
}
