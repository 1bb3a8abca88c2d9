import Crypto
import FallGuardCore
import FallGuardNotify
import Foundation
import Synchronization

/// An acknowledgement received on `<prefix>/<device>/ack`, as its payload reads: an incident id
/// (`FG-3`), or `{"incident": "FG-3", "by": "Anna"}` with a proof when the bridge has an
/// `acknowledge-secret`: `"token": <secret>` (what a Home Assistant script sends), or
/// `"time": <Unix seconds>, "hmac": <hex HMAC-SHA256>` (see ``MQTTAcknowledgementGate``).
/// Parsing only reads the payload; the gate decides whether it acknowledges anything.
public struct MQTTAcknowledgement: Sendable, Equatable {
    /// nil when the payload names no incident: such an ack is refused.
    public var incident: String?
    /// Who, as the publisher wrote it; shown only if it names a configured contact.
    public var by: String?
    /// A step of a call a staff station accepted (issue 37 item 4), not an acknowledgement:
    /// taken only with an HMAC over it (``MQTTAcknowledgementGate/signedText(device:incident:time:by:step:)``).
    public var step: CallStep?
    public var proof: Proof?

    /// How the publisher shows it knows the bridge's secret.
    public enum Proof: Sendable, Equatable {
        case token(String)
        /// Lower-case hex HMAC-SHA256 over ``MQTTAcknowledgementGate/signedText(device:incident:time:)``.
        case hmac(String, time: Int64)
    }

    public init(incident: String?, by: String? = nil, step: CallStep? = nil, proof: Proof? = nil) {
        (self.incident, self.by, self.step, self.proof) = (incident, by, step, proof)
    }

    /// Parses a payload; throws a message saying what is wrong with it.
    public init(payload: [UInt8]) throws(MQTTAcknowledgementError) {
        guard payload.count <= 1_024 else { throw .init("payload longer than 1024 bytes") }
        guard let text = String(validating: payload, as: UTF8.self) else { throw .init("payload is not UTF-8") }
        let trimmed = String(text.trimmingWhitespace)
        guard trimmed.hasPrefix("{") else {
            try self.init(incident: trimmed.isEmpty ? nil : trimmed, by: nil, proof: nil, checked: ())
            return
        }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(trimmed.utf8))
        } catch {
            throw .init("payload is not a JSON object of strings 'incident', 'by', 'step', 'token', 'hmac' and a number 'time'")
        }
        let step: CallStep?
        switch fields.step {
        case nil: step = nil
        case let word?:
            guard let known = CallStep(rawValue: word) else { throw .init("'step' must be presence or reset") }
            step = known
        }
        let proof: Proof?
        switch (fields.token, fields.hmac, fields.time) {
        case (nil, nil, nil): proof = nil
        case let (token?, nil, nil): proof = .token(token)
        case let (nil, hmac?, time?): proof = .hmac(hmac.lowercased(), time: time)
        default: throw .init("give either 'token', or 'hmac' with 'time'")
        }
        let incident = fields.incident.map { String($0.trimmingWhitespace) }
        let by = fields.by.map { String($0.trimmingWhitespace) }
        try self.init(incident: incident?.isEmpty == true ? nil : incident,
                      by: by?.isEmpty == true ? nil : by, step: step, proof: proof, checked: ())
    }

    private struct Fields: Decodable {
        var incident: String?
        var by: String?
        var step: String?
        var token: String?
        var hmac: String?
        var time: Int64?
    }

    private init(incident: String?, by: String?, step: CallStep? = nil, proof: Proof?, checked: ()) throws(MQTTAcknowledgementError) {
        // Incident ids are short plain ASCII (`<prefix>-<n>`); names go into messages.
        if let incident, incident.unicodeScalars.count > 64 || !incident.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) {
            throw .init("'\(incident.prefix(80))' is not an incident id")
        }
        if let by, by.unicodeScalars.count > 100 || by.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .init("'by' must be at most 100 characters without control characters")
        }
        self.init(incident: incident, by: by, step: step, proof: proof)
    }
}

/// Why an acknowledgement payload was refused.
public struct MQTTAcknowledgementError: Error, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Decides whether an acknowledgement read from the ack topic may reach the alarm. It must name
/// its incident (an ack for an incident that is not the active alert then changes nothing in
/// the alert engine), and, when the bridge has a secret, prove it knows it:
/// - `token` equal to the secret (compared in constant time), only with `acknowledge-mode:
///   token` (TLS or a broker on this machine: the token is a reusable secret), or
/// - `hmac` = HMAC-SHA256(secret, `fallguard-ack-2\n<device>\n<incident>\n<time>\n<by>`) in
///   hex, with `time` within ``window`` seconds of the bridge's clock (``check(_:now:)`` says
///   which clock across a step of it): bound to this bridge,
///   this incident and this name, and taken once (a MAC seen before within the window is
///   refused: a captured acknowledgement cannot be published again). The older
///   `fallguard-ack\n<device>\n<incident>\n<time>` (no name) still acknowledges, but its `by`
///   is not proven, so the bridge does not attribute the acknowledgement to it.
///
/// A call's later step (``CallStep``: presence, reset) is signed over
/// `fallguard-step-1\n<device>\n<incident>\n<time>\n<by>\n<step>`, HMAC only and always named:
/// another text than an acknowledgement's, so neither passes for the other, and a bridge that
/// does not know steps refuses one ("wrong hmac") rather than take it as an acknowledgement.
public struct MQTTAcknowledgementGate: Sendable {
    public let device: String
    private let secret: [UInt8]?
    /// Whether the secret itself is taken as a proof (``AcknowledgeMode/token``); else HMAC only.
    public let acceptsToken: Bool
    /// Whether acks must prove they know a secret.
    public var hasSecret: Bool { secret != nil }
    /// Seconds an HMAC's `time` may differ from the bridge's clock.
    public static let window: Int64 = 300
    private let seen = SeenProofs()
    /// The wall clock as it read when the gate was made, carried forward by the monotonic clock
    /// and never following a step: the time of day before the bridge's clock was stepped.
    private let steady: SteadyWallClock
    private let clockSynchronized: @Sendable () -> Bool?

    /// What an acknowledgement that passed proves: its incident, and its name when the proof
    /// covers the name (nil: the name, if any, is only what the publisher wrote).
    public struct Checked: Sendable, Equatable {
        public var incident: String
        public var provenBy: String?
        /// A call's step (its name proven with it); nil: an acknowledgement.
        public var step: CallStep? = nil
    }

    /// - Parameter clock: the wall clock (``SteadyWallClock/wall``) and the steady one beside
    ///   it (a test steps the first).
    /// - Parameter clockSynchronized: whether the wall clock is synchronised (nil: not known).
    public init(device: String, secret: String?, acceptsToken: Bool = false,
                clock: SteadyWallClock = SteadyWallClock(), clockSynchronized: @escaping @Sendable () -> Bool? = { nil }) {
        self.device = device
        self.secret = secret.map { Array($0.utf8) }
        self.acceptsToken = acceptsToken
        self.steady = clock
        self.clockSynchronized = clockSynchronized
    }

    /// The text an HMAC signs: with `by`, the name is signed too (`fallguard-ack-2`).
    /// A call's step (`fallguard-step-1`) signs the name and the step as well.
    public static func signedText(device: String, incident: String, time: Int64, by: String? = nil, step: CallStep? = nil) -> String {
        if let step { return "fallguard-step-1\n\(device)\n\(incident)\n\(time)\n\(by ?? "")\n\(step.rawValue)" }
        guard let by else { return "fallguard-ack\n\(device)\n\(incident)\n\(time)" }
        return "fallguard-ack-2\n\(device)\n\(incident)\n\(time)\n\(by)"
    }

    /// The hex HMAC a publisher sends (tests and `tools/` use it too); with `by`, over the name;
    /// with `step`, over a call's step.
    public static func hmac(secret: String, device: String, incident: String, time: Int64, by: String? = nil,
                            step: CallStep? = nil) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(signedText(device: device, incident: incident, time: time, by: by, step: step).utf8),
                                                   using: SymmetricKey(data: Array(secret.utf8)))
        return code.lowercaseHex
    }

    /// Bridge `device`'s own key, derived from the site's key (issue 40 item 5): the hex
    /// HMAC-SHA256(site key, `fallguard-bridge-key\n<device>`). It is that bridge's
    /// `acknowledge-secret`; the station and Home Assistant hold the site key and derive every
    /// bridge's, so a bridge's file proves acknowledgements for itself alone.
    public static func bridgeKey(siteKey: String, device: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Array("fallguard-bridge-key\n\(device)".utf8),
                                        using: SymmetricKey(data: Array(siteKey.utf8))).lowercaseHex
    }

    /// The incident the ack acknowledges, or why it acknowledges nothing.
    public func incident(of ack: MQTTAcknowledgement, now: Date? = nil) -> Result<String, MQTTAcknowledgementError> {
        check(ack, now: now).map(\.incident)
    }

    /// The incident and the proven name, or why the ack acknowledges nothing. An HMAC that
    /// passes is remembered for the window, and the same one again is refused.
    ///
    /// Its `time` is held to the bridge's wall clock or to the steady clock beside it (the time
    /// of day before the wall clock was last stepped), whichever it is within ``window`` of: a
    /// Pi without a real-time clock is stepped by NTP, by days at times, and a caregiver's
    /// acknowledgement signed on a right clock must not be refused because this one moved, in
    /// either direction. While the wall clock is known not to be synchronised (booted with the
    /// time it last saved, no NTP: no internet) no time of this bridge's can be trusted, so
    /// the time is not held to it: the MAC still binds this bridge, the open incident (incident
    /// numbers are kept in the state directory and never reused) and the name, and is taken
    /// once. `now` (tests) replaces both clocks.
    public func check(_ ack: MQTTAcknowledgement, now: Date? = nil) -> Result<Checked, MQTTAcknowledgementError> {
        guard let incident = ack.incident else {
            return .failure(.init("it names no incident (send {\"incident\": \"FG-…\"})"))
        }
        if ack.step != nil, secret == nil {
            return .failure(.init("a step is taken only by a bridge with an acknowledge-secret, proven with its hmac"))
        }
        guard let secret else { return .success(Checked(incident: incident, provenBy: nil)) }
        switch ack.proof {
        case nil:
            return .failure(.init("it carries no token or hmac, and this bridge has an acknowledge-secret"))
        case .token where ack.step != nil:
            return .failure(.init("a step is taken only with 'hmac' and 'time'"))
        case let .token(token):
            guard acceptsToken else {
                return .failure(.init("a token is not taken (acknowledge-mode: hmac): send 'hmac' with 'time'"))
            }
            return Self.constantTimeEqual(Array(token.utf8), secret)
                ? .success(Checked(incident: incident, provenBy: nil)) : .failure(.init("wrong token"))
        case let .hmac(hex, time):
            let wall = now?.timeIntervalSince1970 ?? steady.wall()
            let clocks = now == nil ? [wall, steady.now()] : [wall]
            let seconds = Int64(wall.rounded())
            let fresh = clocks.contains { abs(Double(time) - $0) < Double(Self.window) }
            guard fresh || (now == nil && clockSynchronized() == false) else {
                return .failure(.init("its time \(time) is more than \(Self.window) s from the bridge's clock (\(seconds))"))
            }
            guard let mac = Self.bytes(hex: hex) else { return .failure(.init("wrong hmac")) }
            let key = SymmetricKey(data: secret)
            func signs(_ by: String?, _ step: CallStep? = nil) -> Bool {
                HMAC<SHA256>.isValidAuthenticationCode(
                    mac, authenticating: Array(Self.signedText(device: device, incident: incident, time: time, by: by, step: step).utf8),
                    using: key)
            }
            let provenBy: String?
            if let step = ack.step {
                // A step is named, and its name and step are signed: nothing else passes.
                guard let by = ack.by, signs(by, step) else { return .failure(.init("wrong hmac")) }
                provenBy = by
            } else if let by = ack.by, signs(by) { provenBy = by } else if signs(nil) { provenBy = nil } else {
                return .failure(.init("wrong hmac"))
            }
            guard seen.first(hex, time: time, now: seconds) else {
                return .failure(.init("this hmac was taken before (an acknowledgement is taken once)"))
            }
            return .success(Checked(incident: incident, provenBy: provenBy, step: ack.step))
        }
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) { difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0xFF) }
        return difference == 0
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for i in stride(from: 0, to: 64, by: 2) {
            guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

/// The HMACs a gate has taken, each until its time is out of the window: a captured
/// acknowledgement published again is refused. Bounded: past ``capacity`` the oldest by time
/// goes (a flood of valid MACs needs the secret).
final class SeenProofs: Sendable {
    static let capacity = 4096
    private let table = Mutex<[String: Int64]>([:])

    /// Whether `mac` (signed at `time`) is new; remembers it.
    func first(_ mac: String, time: Int64, now: Int64) -> Bool {
        table.withLock { t in
            guard t[mac] == nil else { return false }
            if t.count >= Self.capacity {
                t = t.filter { $0.value > now - MQTTAcknowledgementGate.window }
                if t.count >= Self.capacity, let oldest = t.min(by: { $0.value < $1.value }) { t[oldest.key] = nil }
            }
            t[mac] = time
            return true
        }
    }
}

/// The retained JSON on `<prefix>/<device>/power`: the lowest battery's capacity and status,
/// and whether the mains is online (`online`/`offline`); a field nobody can tell is left out.
public struct MQTTPower: Sendable, Codable, Equatable {
    public var battery: Int?
    public var batteryStatus: String?
    public var mains: String?

    enum CodingKeys: String, CodingKey {
        case battery, mains
        case batteryStatus = "battery-status"
    }

    public init(_ reading: PowerReading) {
        let low = reading.lowestBattery ?? reading.batteries.first
        (battery, batteryStatus) = (low?.capacity, low?.status)
        mains = reading.mainsOnline.map { $0 ? "online" : "offline" }
    }

    /// Which entities it feeds: a battery, the mains.
    var entities: [Bool] { [battery != nil, mains != nil] }
}

/// The retained JSON on `<prefix>/<device>/modem`: the cellular modem's state, signal
/// (percent), registration and what stops it sending (absent when nothing does).
public struct MQTTModem: Sendable, Codable, Equatable {
    public var state: String
    public var signal: Int?
    public var registration: String?
    public var problem: String?

    public init(state: String, signal: Int?, registration: String?, problem: String?) {
        (self.state, self.signal, self.registration, self.problem) = (state, signal, registration, problem)
    }
}
