import Foundation
import Synchronization

/// ModemManager (`org.freedesktop.ModemManager1` on the system bus) through its own command-line
/// client, `mmcli`, with JSON output (`-J`): the messaging (`Modem.Messaging` Create, `Sms.Send`),
/// voice (`Modem.Voice` CreateCall, `Call.Start`/`Hangup`) and the modem's state (`Modem.State`,
/// `UnlockRequired`, `SignalQuality`, `Modem3gpp.RegistrationState`). Every run is bounded by
/// ``timeout``: a hung ModemManager costs an attempt, never the delivery worker.
public struct ModemManager: Sendable, Equatable {
    /// The `mmcli` program.
    public var mmcli: String
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

    func json(_ arguments: [String]) async throws -> [String: Any] {
        let text = try await run(arguments + ["-J"])
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw Unavailable(description: "mmcli \(arguments.joined(separator: " ")) -J: not JSON: \(text.prefix(120))")
        }
        return object
    }

    // MARK: The modem

    /// The D-Bus path of the configured modem.
    public func modemPath() async throws -> String {
        let list = try await json(["-L"])["modem-list"] as? [String] ?? []
        if list.isEmpty { throw Unavailable(description: "ModemManager lists no modem (unplugged, or not detected yet)") }
        if modem.isEmpty { return list[0] }
        if let path = list.first(where: { $0 == modem || $0.hasSuffix("/Modem/\(modem)") }) { return path }
        for path in list {
            let generic = (try? await json(["-m", path]))?.dig("modem", "generic")
            if generic?["equipment-identifier"] as? String == modem { return path }
        }
        throw Unavailable(description: "ModemManager has no modem '\(modem)' (it lists \(list.joined(separator: ", ")))")
    }

    /// The modem's state now. A modem ModemManager keeps disabled (nothing asked it to enable
    /// it: no NetworkManager connection for it, a Debian without NetworkManager) cannot send or
    /// call, so it is enabled here (`mmcli -e`, polkit's `Device.Control` for the fallguard
    /// user: deploy/polkit) and read again; if that fails the status says it is disabled.
    public func status() async throws -> ModemStatus {
        let path = try await modemPath()
        let modem = try await json(["-m", path])["modem"] as? [String: Any] ?? [:]
        let status = ModemStatus(path: path, json: modem)
        guard status.state == "disabled", (try? await run(["-m", path, "-e"])) != nil else { return status }
        return ModemStatus(path: path, json: try await json(["-m", path])["modem"] as? [String: Any] ?? [:])
    }

    // MARK: SMS

    /// Sends `text` to `number` (E.164) and returns the SMS's path. ModemManager splits a long
    /// text into the parts of a concatenated SMS.
    func sendSMS(_ text: String, to number: String) async throws -> String {
        let path = try await modemPath()
        let created = try await run(["-m", path, "--messaging-create-sms=number='\(number)',text=\(Self.quoted(text))"])
        guard let sms = Self.objectPath(in: created, kind: "SMS") else {
            throw Unavailable(description: "mmcli made no SMS: \(created.prefix(200))")
        }
        do {
            _ = try await run(["-s", sms, "--send"])
        } catch let error as Unavailable where error.timedOut {
            // mmcli stopped waiting, but ModemManager goes on sending: a slow serial line, SMS
            // queued behind others on the modem's one AT port, parts waiting on the network
            // (bench/modem-real.sh: three 2-part SMS took 37 s). Sending it again would tell
            // the contact twice: wait for its state instead.
            guard await sentLater(sms) else { throw error }
            await forget(sms, modem: path)
            return sms
        }
        // `--send` returns once the modem took it. A look afterwards that fails (a timeout, a
        // stop) must not send it again: only a state read as something else than sent does.
        guard let read = try? await json(["-s", sms]) else { return sms }
        let state = read.dig("sms", "properties")?["state"] as? String
        guard state == "sent" else { throw Unavailable(description: "the SMS \(sms) is '\(state ?? "?")', not sent") }
        await forget(sms, modem: path)
        return sms
    }

    /// Deletes a sent SMS from ModemManager's list (best effort). ModemManager keeps every SMS
    /// it sent until deleted, and the reply poll reads each SMS in that list with an `mmcli` of
    /// its own while an alarm is open: kept, every alert would make each later poll slower.
    func forget(_ sms: String, modem path: String) async {
        _ = try? await run(["-m", path, "--messaging-delete-sms=\(sms)"])
    }

    /// Whether the SMS at `sms`, whose `--send` timed out, is `sent` within ``timeout`` more
    /// seconds (its state read every 2 s).
    func sentLater(_ sms: String) async -> Bool {
        let end = Date().addingTimeInterval(timeout)
        repeat {
            let state = (try? await json(["-s", sms]))?.dig("sms", "properties")?["state"] as? String
            if state == "sent" { return true }
            if Task.isCancelled { return false }   // stopping: no loop of mmcli runs that end at once
            try? await Task.sleep(for: .seconds(2))
        } while Date() < end
        return false
    }

    /// Deletes the SMS at `paths` from the modem, looking the modem up once (best effort: one
    /// left is read again, and its id, taken once, keeps it from counting twice).
    func deleteSMS(_ paths: [String]) async {
        guard !paths.isEmpty, let path = try? await modemPath() else { return }
        for sms in paths { _ = try? await run(["-m", path, "--messaging-delete-sms=\(sms)"]) }
    }

    /// `text` as one value of `mmcli`'s key=value list: between quotes it has none of (it knows
    /// no escapes), so a text with both kinds has its `"` written as `''`.
    static func quoted(_ text: String) -> String {
        if !text.contains("'") { return "'\(text)'" }
        return "\"" + text.replacingOccurrences(of: "\"", with: "''") + "\""
    }

    /// The SMS the modem received (`pdu-type` deliver), oldest first.
    func receivedSMS() async throws -> [ReceivedSMS] {
        let path = try await modemPath()
        let list = try await json(["-m", path, "--messaging-list-sms"])["modem.messaging.sms"] as? [String] ?? []
        var found: [ReceivedSMS] = []
        for sms in list {
            guard let s = try? await json(["-s", sms])["sms"] as? [String: Any],
                  let properties = s["properties"] as? [String: Any], let content = s["content"] as? [String: Any],
                  properties["pdu-type"] as? String == "deliver", properties["state"] as? String == "received",
                  let from = content["number"] as? String, let text = content["text"] as? String else { continue }
            let stamp = properties["timestamp"] as? String ?? ""
            found.append(ReceivedSMS(path: sms, from: from, text: text, timestamp: stamp, sentAt: ISO8601Offset.seconds(stamp)))
        }
        return found
    }

    // MARK: Calls

    /// Dials `number` and returns the call's path.
    func startCall(to number: String) async throws -> String {
        let path = try await modemPath()
        let created = try await run(["-m", path, "--voice-create-call=number=\(number)"])
        guard let call = Self.objectPath(in: created, kind: "Call") else {
            throw Unavailable(description: "mmcli made no call: \(created.prefix(200))")
        }
        _ = try await run(["-o", call, "--start"])
        return call
    }

    /// The call's `state` and `state-reason` (`ringing-out`, `active`, `terminated`; `accepted`,
    /// `refused-or-busy`, …); nil when ModemManager no longer knows it.
    func callState(_ call: String) async throws -> (state: String, reason: String)? {
        guard let properties = (try? await json(["-o", call]))?.dig("call", "properties") else {
            // Gone (ModemManager restarted, the call deleted), or ModemManager down: tell them apart.
            _ = try await modemPath()
            return nil
        }
        return (properties["state"] as? String ?? "unknown", properties["state-reason"] as? String ?? "unknown")
    }

    func hangUp(_ call: String) async {
        _ = try? await run(["-o", call, "--hangup"])
    }

    /// The object path of `kind` (`SMS`, `Call`) in `mmcli`'s "Successfully created new …: PATH".
    static func objectPath(in text: String, kind: String) -> String? {
        text.split(whereSeparator: \.isWhitespace).map(String.init).first { $0.hasPrefix("/org/freedesktop/ModemManager1/\(kind)/") }
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
