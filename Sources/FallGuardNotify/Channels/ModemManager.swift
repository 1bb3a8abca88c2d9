import Foundation
import Synchronization

/// ModemManager (`org.freedesktop.ModemManager1` on the system bus). The modem's state
/// (`Modem.State`, `UnlockRequired`, `SignalQuality`, `Modem3gpp.RegistrationState`), the modem
/// list and enabling go through its own client, `mmcli`, with JSON output (`-J`); what lies on
/// an alert's path (`Modem.Messaging` Create/Delete/Messages, `Sms.Send`, `Modem.Voice`
/// CreateCall, `Call.Start`/`Hangup`/`State`) goes through systemd's `busctl`, one D-Bus call a
/// run: `mmcli` reads every object ModemManager has before it makes its one call, which took
/// seconds a run in the kernel rig's emulated guest (bench/modem-real.sh). The modem's D-Bus
/// path is looked up once and kept until a call on it fails. Every run is bounded by
/// ``timeout``: a hung ModemManager costs an attempt, never the delivery worker.
public struct ModemManager: Sendable, Equatable {
    /// The `mmcli` program.
    public var mmcli: String
    /// The `busctl` program (systemd's D-Bus client).
    public var busctl = "busctl"
    /// Which modem: empty for the first ModemManager lists, else its index (`0`), its D-Bus
    /// object path or its equipment identifier (the IMEI).
    public var modem: String
    /// Seconds for one `mmcli` run.
    public var timeout: Double
    /// The system bus's address for `mmcli` (a test's private bus); nil: the process's
    /// `DBUS_SYSTEM_BUS_ADDRESS`, else the system's.
    public var systemBus: String?

    public init(mmcli: String = "mmcli", modem: String = "", timeout: Double = 30) {
        (self.mmcli, self.modem, self.timeout) = (mmcli, modem, timeout)
    }

    /// Why ModemManager cannot be used now (no modem, no ModemManager, `mmcli` failing).
    public struct Unavailable: Error, Equatable, CustomStringConvertible {
        public var description: String
        /// `mmcli` (or its D-Bus call) stopped waiting: ModemManager may still be doing it.
        public var timedOut = false
        /// `Sms.Send`/`Call.Start` timed out: the SMS or call may have gone out, so this attempt
        /// does not try again (one refused outright was deleted, and is tried again).
        public var afterSend = false
    }

    // MARK: Running mmcli

    /// `mmcli arguments…`'s standard output; a failure names the command and what it said.
    func run(_ arguments: [String]) async throws -> String {
        guard let path = ExecChannel.resolve(mmcli) else {
            throw Unavailable(description: "'\(mmcli)' is not installed (Debian: apt install modemmanager)")
        }
        let result = try await ChildProcess.run(path, arguments, input: Data(), timeout: timeout, environment: environment,
                                                captureOutput: true)
        guard result.outcome == .exited(0) else {
            if result.stderr.contains("couldn't find the ModemManager process") {
                throw Unavailable(description: "ModemManager is not running (systemctl status ModemManager)")
            }
            if result.stderr.contains("couldn't get bus") {
                throw Unavailable(description: "the system D-Bus cannot be reached, so neither can ModemManager: \(result.stderr.suffix(200))")
            }
            let said = result.stderr.isEmpty ? result.stdout.suffix(300) : Substring(result.stderr)
            throw Unavailable(description: "mmcli \(arguments.joined(separator: " ")) \(result.describeOutcome)"
                + (said.isEmpty ? "" : ": \(said.trimmingCharacters(in: .whitespacesAndNewlines))"),
                timedOut: result.outcome == .timedOut || said.contains("Timeout was reached"))
        }
        return result.stdout
    }

    /// The command's minimal environment, and the system bus's address when one is set (a test
    /// bus, a container): D-Bus is how `mmcli` reaches ModemManager.
    var environment: [String: String] {
        var env = ChildProcess.environment
        if let bus = systemBus ?? ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] { env["DBUS_SYSTEM_BUS_ADDRESS"] = bus }
        return env
    }

    /// `busctl --json=short arguments…` on the system bus: the `data` of each line it printed (a
    /// call's return values as one array; each property's value of a `get-property`).
    func dbus(_ arguments: [String]) async throws -> [Any] {
        guard let path = ExecChannel.resolve(busctl) else {
            throw Unavailable(description: "'\(busctl)' is not installed (Debian: apt install systemd)")
        }
        let limit = "--timeout=\(Int(timeout * 1000))ms"
        // "--": a text that starts with "-" ("-- FALL ALERT --") is an argument, not an option.
        let result = try await ChildProcess.run(path, ["--system", "--json=short", limit, "--"] + arguments, input: Data(), timeout: timeout + 2,
                                                environment: environment, captureOutput: true)
        guard result.outcome == .exited(0) else {
            let said = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            if said.contains("org.freedesktop.ModemManager1 was not provided") || said.contains("ServiceUnknown") {
                throw Unavailable(description: "ModemManager is not running (systemctl status ModemManager)")
            }
            throw Unavailable(description: "busctl \(arguments.joined(separator: " ")) \(result.describeOutcome)" + (said.isEmpty ? "" : ": \(said)"),
                              timedOut: result.outcome == .timedOut || said.contains("timed out"))
        }
        return try result.stdout.split(separator: "\n").map { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let data = object["data"] else {
                throw Unavailable(description: "busctl \(arguments.joined(separator: " ")): not JSON: \(line.prefix(120))")
            }
            return data
        }
    }

    static let service = "org.freedesktop.ModemManager1"

    /// Calls `method` of ModemManager's `interface` (after `org.freedesktop.ModemManager1.`) on
    /// `object`, with `busctl`'s signature and arguments; its return values.
    func call(_ object: String, _ interface: String, _ method: String, _ arguments: [String] = []) async throws -> [Any] {
        try await dbus(["call", Self.service, object, "\(Self.service).\(interface)", method] + arguments).first as? [Any] ?? []
    }

    /// The values of `properties` of `interface` on `object`.
    func properties(_ object: String, _ interface: String, _ properties: String...) async throws -> [Any] {
        try await dbus(["get-property", Self.service, object, "\(Self.service).\(interface)"] + properties)
    }

    func json(_ arguments: [String]) async throws -> [String: Any] {
        let text = try await run(arguments + ["-J"])
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw Unavailable(description: "mmcli \(arguments.joined(separator: " ")) -J: not JSON: \(text.prefix(120))")
        }
        return object
    }

    // MARK: The modem

    /// The D-Bus path of the configured modem, looked up now (and kept for ``knownModemPath()``).
    public func modemPath() async throws -> String {
        // The kept path stays usable while this runs (an alert does not wait for this look's
        // seconds-long `mmcli -L`), and is forgotten only when the look fails.
        try await forgettingPathOnFailure { try await lookUpModemPath() }
    }

    /// `body`, which uses the modem's path; when it fails the kept path is forgotten, so it is
    /// looked up again next time (ModemManager restarted, the modem replugged at a new index).
    private func forgettingPathOnFailure<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { forgetModemPath(); throw error }
    }

    private func lookUpModemPath() async throws -> String {
        let list = try await json(["-L"])["modem-list"] as? [String] ?? []
        if list.isEmpty { throw Unavailable(description: "ModemManager lists no modem (unplugged, or not detected yet)") }
        var found: String?
        if modem.isEmpty { found = list[0] } else if let path = list.first(where: { $0 == modem || $0.hasSuffix("/Modem/\(modem)") }) {
            found = path
        } else {
            for path in list where (try? await json(["-m", path]))?.dig("modem", "generic")?["equipment-identifier"] as? String == modem {
                found = path
                break
            }
        }
        guard let found else { throw Unavailable(description: "ModemManager has no modem '\(modem)' (it lists \(list.joined(separator: ", ")))") }
        Self.knownPaths.withLock { $0[pathKey] = found }
        return found
    }

    /// The modems' paths last looked up, by bus and ``modem``. A path changes only when
    /// ModemManager finds the modem again (restarted, replugged): a call on a path it no longer
    /// has fails, and the path is looked up again.
    private static let knownPaths = Mutex<[String: String]>([:])
    private var pathKey: String { (environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "") + " " + modem }

    /// The modem's path as last looked up, else looked up now (one `mmcli -L`).
    func knownModemPath() async throws -> String {
        if let path = Self.knownPaths.withLock({ $0[pathKey] }) { return path }
        return try await modemPath()
    }

    func forgetModemPath() { _ = Self.knownPaths.withLock { $0.removeValue(forKey: pathKey) } }

    /// The modem's state now. A modem ModemManager keeps disabled (nothing asked it to enable
    /// it: no NetworkManager connection for it, a Debian without NetworkManager) cannot send or
    /// call, so it is enabled here (`mmcli -e`, polkit's `Device.Control` for the fallguard
    /// user: deploy/polkit) and read again; if that fails the status says it is disabled.
    ///
    /// An enable that fails or outlasts `mmcli` (ModemManager goes on enabling: 27 s in the kernel
    /// rig's emulated guest) is not the answer: the modem is read again, while it is `enabling`
    /// every 2 s for up to ``timeout`` more seconds, so that what stops it (no signal, not
    /// registered, the SIM) is said as such rather than "disabled".
    public func status() async throws -> ModemStatus {
        // Every SMS and call goes through busctl: without it the modem is no way to anyone.
        guard ExecChannel.resolve(busctl) != nil else {
            throw Unavailable(description: "'\(busctl)' is not installed: the modem cannot send (Debian: apt install systemd)")
        }
        let path = try await modemPath()
        let read = { ModemStatus(path: path, json: try await self.json(["-m", path])["modem"] as? [String: Any] ?? [:]) }
        let first = try await read()
        guard first.state == "disabled" else { return first }
        _ = try? await run(["-m", path, "-e"])
        var now = try await read()
        let end = Date().addingTimeInterval(timeout)
        while now.state == "enabling", Date() < end, !Task.isCancelled {
            try? await Task.sleep(for: .seconds(2))
            now = try await read()
        }
        return now
    }

    // MARK: SMS

    /// Sends `text` to `number` (E.164) and returns the SMS's path: `Messaging.Create` and
    /// `Sms.Send`, one `busctl` each. ModemManager splits a long text into the parts of a
    /// concatenated SMS; `Send` returns once every part went out (the SMS is then `sent`).
    func sendSMS(_ text: String, to number: String) async throws -> String {
        let path = try await knownModemPath()
        let sms = try await create(path, "Modem.Messaging", "Create", ["2", "number", "s", number, "text", "s", text])
        do {
            _ = try await call(sms, "Sms", "Send")
        } catch var error as Unavailable {
            error.afterSend = error.timedOut   // refused outright: never sent, deleted below
            // busctl stopped waiting, but ModemManager goes on sending: a slow serial line, SMS
            // queued behind others on the modem's one AT port, parts waiting on the network
            // (bench/modem-real.sh: three 2-part SMS took 37 s). Sending it again would tell
            // the contact twice: wait for its state instead.
            guard error.timedOut, await sentLater(sms) else {
                if !error.timedOut { await forget(sms, modem: path) }   // refused (no network …): never sent
                throw error
            }
        }
        await forget(sms, modem: path)
        return sms
    }

    /// The path of the object (an SMS, a call) that `method` of the modem's `interface` made
    /// from `properties` (busctl's `a{sv}`: their count, then name, type, value each). A
    /// failure forgets the modem's path: it is looked up again next time.
    func create(_ path: String, _ interface: String, _ method: String, _ properties: [String]) async throws -> String {
        try await forgettingPathOnFailure {
            guard let made = try await call(path, interface, method, ["a{sv}"] + properties).first as? String else {
                throw Unavailable(description: "ModemManager's \(method) returned no object")
            }
            return made
        }
    }

    /// Deletes an SMS from ModemManager's list (best effort). ModemManager keeps every SMS
    /// it sent until deleted, and the reply poll reads each SMS in that list while an alarm is
    /// open: kept, every alert would make each later poll slower.
    func forget(_ sms: String, modem path: String) async {
        _ = try? await call(path, "Modem.Messaging", "Delete", ["o", sms])
    }

    /// Whether the SMS at `sms`, whose `Send` timed out, is `sent` within ``timeout`` more
    /// seconds (its state read every 2 s).
    func sentLater(_ sms: String) async -> Bool {
        let end = Date().addingTimeInterval(timeout)
        repeat {
            if (try? await properties(sms, "Sms", "State"))?.first as? Int == Self.smsSent { return true }
            if Task.isCancelled { return false }   // stopping: no loop of mmcli runs that end at once
            try? await Task.sleep(for: .seconds(2))
        } while Date() < end
        return false
    }

    /// Deletes the SMS at `paths` from the modem, looking the modem up once (best effort: one
    /// left is read again, and its id, taken once, keeps it from counting twice).
    func deleteSMS(_ paths: [String]) async {
        guard !paths.isEmpty, let path = try? await knownModemPath() else { return }
        for sms in paths { await forget(sms, modem: path) }
    }

    /// `MMSmsState`'s `received` and `sent`, `MMSmsPduType`'s `deliver`.
    static let (smsReceived, smsSent, pduDeliver) = (3, 5, 1)

    /// The SMS the modem received (`PduType` deliver, `State` received), oldest first: the
    /// `Messages` list, then each SMS's properties (one `busctl` each).
    func receivedSMS() async throws -> [ReceivedSMS] {
        let path = try await knownModemPath()
        let list = try await forgettingPathOnFailure { try await properties(path, "Modem.Messaging", "Messages").first as? [String] ?? [] }
        var found: [ReceivedSMS] = []
        for sms in list {
            guard let all = try? await dbus(["call", Self.service, sms, "org.freedesktop.DBus.Properties", "GetAll", "s", "\(Self.service).Sms"]),
                  let p = (all.first as? [Any])?.first as? [String: Any] else { continue }
            let value = { (key: String) in (p[key] as? [String: Any])?["data"] }
            guard value("PduType") as? Int == Self.pduDeliver, value("State") as? Int == Self.smsReceived,
                  let from = value("Number") as? String, let text = value("Text") as? String else { continue }
            let stamp = value("Timestamp") as? String ?? ""
            found.append(ReceivedSMS(path: sms, from: from, text: text, timestamp: stamp, sentAt: ISO8601Offset.seconds(stamp)))
        }
        return found
    }

    // MARK: Calls

    /// Dials `number` and returns the call's path: `Voice.CreateCall`, then `Call.Start` at
    /// once. ModemManager 1.20 polls an AT modem's call list (`+CLCC`), and so learns that the
    /// call rings, is answered or ends, only if a call is dialling 2 s after one was created
    /// (mm-iface-modem-voice.c: the poll is set up when a call is added, and stops when none is
    /// being established); a call started later stays `dialing` until hung up.
    func startCall(to number: String) async throws -> String {
        let path = try await knownModemPath()
        let made = try await create(path, "Modem.Voice", "CreateCall", ["1", "number", "s", number])
        do {
            _ = try await call(made, "Call", "Start")
        } catch var error as Unavailable {
            error.afterSend = error.timedOut   // refused outright: never dialled, deleted below
            // Dialling after all (busctl stopped waiting): followed, not dialled again.
            if error.timedOut, let state = try? await callState(made), !["unknown", "terminated"].contains(state.state) { return made }
            if !error.timedOut { _ = try? await call(path, "Modem.Voice", "DeleteCall", ["o", made]) }
            throw error
        }
        return made
    }

    /// `MMCallState` and `MMCallStateReason` by number.
    static let callStates = ["unknown", "dialing", "ringing-out", "ringing-in", "active", "held", "waiting", "terminated"]
    static let callReasons = ["unknown", "outgoing-started", "incoming-new", "accepted", "terminated", "refused-or-busy", "error",
                              "audio-setup-failed", "transferred", "deflected"]

    /// The call's `state` and `state-reason` (`ringing-out`, `active`, `terminated`; `accepted`,
    /// `refused-or-busy`, …); nil when ModemManager no longer knows it.
    func callState(_ call: String) async throws -> (state: String, reason: String)? {
        guard let values = try? await properties(call, "Call", "State", "StateReason"), values.count == 2 else {
            // Gone (ModemManager restarted, the call deleted), or ModemManager down: tell them apart.
            _ = try await modemPath()
            return nil
        }
        let name = { (names: [String], value: Any) in (value as? Int).flatMap { names.indices.contains($0) ? names[$0] : nil } ?? "unknown" }
        return (name(Self.callStates, values[0]), name(Self.callReasons, values[1]))
    }

    func hangUp(_ call: String) async {
        _ = try? await self.call(call, "Call", "Hangup")
    }
}

/// An SMS the modem received.
struct ReceivedSMS: Sendable, Equatable {
    var path: String
    var from: String
    var text: String
    /// ModemManager's text (the service centre's time stamp), as given.
    var timestamp: String
    /// Unix seconds of ``timestamp``, nil when it cannot be read.
    var sentAt: Double?
}

/// The modem as `mmcli -m` shows it, and what is wrong with it for sending alerts.
public struct ModemStatus: Sendable, Equatable, Codable {
    public var path: String
    /// `Modem.State`: `locked`, `disabled`, `enabled`, `searching`, `registered`, `connected`, `failed`, …
    public var state: String
    /// `StateFailedReason`: `sim-missing`, `sim-error`, … (`--` when none).
    public var failedReason: String
    /// `UnlockRequired`: `sim-pin`, `sim-puk`, … (`--` or `none` when none).
    public var unlockRequired: String
    /// `SignalQuality` in percent.
    public var signalPercent: Int?
    /// `Modem3gpp.RegistrationState`: `home`, `roaming`, `searching`, `denied`, `idle`, …
    public var registration: String
    public var operatorName: String

    public init(path: String, state: String, failedReason: String = "--", unlockRequired: String = "--",
                signalPercent: Int? = nil, registration: String = "--", operatorName: String = "") {
        (self.path, self.state, self.failedReason, self.unlockRequired) = (path, state, failedReason, unlockRequired)
        (self.signalPercent, self.registration, self.operatorName) = (signalPercent, registration, operatorName)
    }

    init(path: String, json modem: [String: Any]) {
        let generic = modem["generic"] as? [String: Any] ?? [:]
        let gpp = modem["3gpp"] as? [String: Any] ?? [:]
        let signal = (generic["signal-quality"] as? [String: Any])?["value"] as? String
        self.init(path: path, state: generic["state"] as? String ?? "unknown",
                  failedReason: generic["state-failed-reason"] as? String ?? "--",
                  unlockRequired: generic["unlock-required"] as? String ?? "--",
                  signalPercent: signal.flatMap { Int($0) },
                  registration: gpp["registration-state"] as? String ?? "--",
                  operatorName: (gpp["operator-name"] as? String).flatMap { $0 == "--" ? nil : $0 } ?? "")
    }

    /// Registered to a network (home or roaming): an SMS can go out.
    public var registered: Bool { registration == "home" || registration == "roaming" }

    /// What stops this modem sending an alert, in words for `status` and a device-problem; nil
    /// when it can.
    public var problem: String? {
        if failedReason == "sim-missing" { return "the modem has no SIM card" }
        // PIN2/PUK2 guard only the SIM's fixed-dialling settings: a modem that still lists them
        // (Quectel's do, registered and connected) sends SMS and calls.
        if ["sim-pin", "sim-puk"].contains(unlockRequired) || state == "locked" {
            return "the modem's SIM is locked (\(unlockRequired == "--" ? "PIN" : unlockRequired)): unlock it or remove the PIN"
        }
        if state == "failed" { return "the modem failed (\(failedReason))" }
        if state == "enabling" { return "the modem is still being enabled (ModemManager has not finished: wait, or see its log)" }
        if state == "disabled" {
            return "the modem is disabled and could not be enabled (mmcli -m 0 -e; polkit must let the fallguard user control it)"
        }
        if !registered {
            if signalPercent == 0 { return "the modem has no signal" }
            return "the modem is not registered to a mobile network (\(registration))"
        }
        return nil
    }
}

extension [String: Any] {
    /// The nested object at `keys`.
    func dig(_ keys: String...) -> [String: Any]? {
        var current: [String: Any]? = self
        for key in keys { current = current?[key] as? [String: Any] }
        return current
    }
}

/// ModemManager's time stamps: `2026-11-27T20:01:02+01` or `…+01:00` or `…Z`.
enum ISO8601Offset {
    static func seconds(_ text: String) -> Double? {
        let chars = Array(text)
        guard chars.count >= 19 else { return nil }
        let digits = { (from: Int, count: Int) -> Int? in Int(String(chars[from..<(from + count)])) }
        guard let y = digits(0, 4), let mo = digits(5, 2), let d = digits(8, 2), let h = digits(11, 2), let mi = digits(14, 2),
              let s = digits(17, 2) else { return nil }
        var offset = 0
        let rest = String(chars[19...]).split(separator: ".", maxSplits: 1).last.map(String.init) ?? ""
        if let sign = rest.firstIndex(where: { $0 == "+" || $0 == "-" }) {
            // ±HH, ±HHMM or ±HH:MM
            let digits = rest[rest.index(after: sign)...].filter(\.isNumber)
            let hours = Int(digits.prefix(2)) ?? 0, minutes = Int(digits.dropFirst(2).prefix(2)) ?? 0
            offset = (hours * 3600 + minutes * 60) * (rest[sign] == "-" ? -1 : 1)
        }
        var c = DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        c.timeZone = TimeZone(identifier: "UTC")
        guard let date = Calendar(identifier: .gregorian).date(from: c) else { return nil }
        return date.timeIntervalSince1970 - Double(offset)
    }
}
