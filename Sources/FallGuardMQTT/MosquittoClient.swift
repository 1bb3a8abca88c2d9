import CLibMosquitto
import Dispatch
import Foundation
import FallGuardNotify
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What libmosquitto's network thread reports. Handlers run on that thread: keep them short.
enum MosquittoEvent: Sendable {
    /// CONNACK with success. `bounded`: the broker speaks MQTT 5 and so honours our Maximum
    /// Packet Size; false for a broker that refused MQTT 5 and took 3.1.1, which could send a
    /// message of any size: ``MosquittoClient/subscribe(_:)`` then subscribes to nothing.
    case connected(bounded: Bool)
    /// CONNACK with a refusal; `permanent` for a protocol version or client id the broker refuses.
    case refused(reason: String, permanent: Bool)
    case disconnected(reason: String)
    /// libmosquitto's own error text (TLS handshake, certificate), while not connected.
    case error(String)
    /// `retained`: the broker kept it and sends it because we (re)subscribed, not because
    /// someone published it now.
    case message(topic: String, payload: [UInt8], retained: Bool)
}

/// How to reach the broker.
struct MosquittoOptions: Sendable {
    var host: String
    var port: Int
    var clientID: String
    var keepalive: Int
    var username: String?
    var password: String?
    /// Retained QoS 1 last will (nil: none).
    var will: (topic: String, payload: String)?
    var tls: (caFile: String?, certFile: String?, keyFile: String?)?
    var reconnectDelay: Int
    var reconnectDelayMax: Int
    /// The largest MQTT packet (topic, properties and payload) the broker may send us: MQTT 5's
    /// Maximum Packet Size on CONNECT. The broker drops a larger message for this client (and
    /// says so in its log) instead of sending it; libmosquitto itself would allocate whatever
    /// length a packet announces.
    var maximumPacketSize: Int
}

private let libraryInitialised: Void = { _ = mosquitto_lib_init() }()

/// One libmosquitto client with its own network thread, which connects and reconnects with
/// exponential backoff. The single owner of the C object.
///
/// Sendable: libmosquitto's publish and subscribe are thread-safe in threaded mode, and
/// everything Swift keeps is behind ``state``'s mutex.
final class MosquittoClient: @unchecked Sendable {
    private let handle: OpaquePointer
    let options: MosquittoOptions
    private let onEvent: @Sendable (MosquittoClient, MosquittoEvent) -> Void
    private let state = Mutex(State())
    /// Ends the network thread's backoff early (stop).
    private let wake = DispatchSemaphore(value: 0)
    private let loopFinished = DispatchSemaphore(value: 0)

    private struct State {
        var running = false
        var connected = false
        /// Why the last attempt failed or the connection dropped; cleared on connect.
        var problem: String?
        var refusedForGood = false
        /// The last connection attempt's failure that was reported as an event.
        var lastReported: String?
        /// A CONNACK came since the last attempt began: the backoff starts again.
        var hadConnection = false
        var publishes: [Int32: Publish] = [:]
        /// The broker refused MQTT 5: connections go on with 3.1.1, which cannot bound what the
        /// broker sends, so nothing is subscribed (publishing still works).
        var unbounded = false
        var connectionWaiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextWaiter = 0
    }

    /// A QoS ≥ 1 message between `mosquitto_publish` and the broker's PUBACK.
    private enum Publish {
        case waiting(CheckedContinuation<Void, any Error>)
        /// PUBACK came before anyone waited, with its reason (MQTT 5; 0 for 3.1.1).
        case acknowledged(reason: Int32)
        /// Nobody waits (retained state, or the waiter timed out).
        case ignored
    }

    var endpoint: String { "\(options.host):\(options.port)" }

    /// Creates the client and applies credentials, last will, TLS and backoff; connects on
    /// ``start()``.
    init(_ options: MosquittoOptions, onEvent: @escaping @Sendable (MosquittoClient, MosquittoEvent) -> Void) throws(MQTTError) {
        _ = libraryInitialised
        guard let h = mosquitto_new(options.clientID, true, nil) else {
            throw MQTTError("cannot create an MQTT client: out of memory or bad client id '\(options.clientID)'")
        }
        handle = h
        self.options = options
        self.onEvent = onEvent
        try check(mosquitto_int_option(h, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V5)), "protocol version")
        try check(Self.setConnectProperties(h, maximumPacketSize: options.maximumPacketSize), "maximum packet size")
        if let user = options.username {
            try check(mosquitto_username_pw_set(h, user, options.password), "username/password")
        }
        if let (topic, payload) = options.will {
            let will = Array(payload.utf8)
            try check(mosquitto_will_set(h, topic, Int32(will.count), will, 1, true), "last will")
        }
        if let tls = options.tls {
            let caPath: String? = tls.caFile == nil ? "/etc/ssl/certs" : nil
            try check(mosquitto_tls_set(h, tls.caFile, caPath, tls.certFile, tls.keyFile, nil), "TLS files")
        }
        mosquitto_connect_callback_set(h) { _, me, rc in MosquittoClient.from(me)?.connected(rc) }
        mosquitto_disconnect_callback_set(h) { _, me, rc in MosquittoClient.from(me)?.disconnected(rc) }
        // MQTT 5's PUBACK carries a reason: 0 or 16 ("no matching subscribers") is taken, 128
        // and above is a refusal (135: the broker's ACL does not let us publish there), which
        // MQTT 3.1.1 acknowledged silently.
        mosquitto_publish_v5_callback_set(h) { _, me, mid, reason, _ in MosquittoClient.from(me)?.acknowledged(mid, reason: reason) }
        mosquitto_log_callback_set(h) { _, me, level, text in
            guard level == MOSQ_LOG_ERR, let text else { return }
            MosquittoClient.from(me)?.libraryError(String(cString: text))
        }
        mosquitto_message_callback_set(h) { _, me, message in
            guard let client = MosquittoClient.from(me), let m = message?.pointee, let topic = m.topic else { return }
            let payload = m.payload.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: Int(m.payloadlen))) } ?? []
            client.onEvent(client, .message(topic: String(cString: topic), payload: payload, retained: m.retain))
        }
    }

    deinit { mosquitto_destroy(handle) }

    private func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError("\(what): \(Self.describe(rc))") }
    }

    /// The client behind libmosquitto's user data; nil before ``start()``.
    private static func from(_ pointer: UnsafeMutableRawPointer?) -> MosquittoClient? {
        pointer.map { Unmanaged<MosquittoClient>.fromOpaque($0).takeUnretainedValue() }
    }

    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    /// Starts the network thread, which makes the first connection attempt; returns at once.
    /// The client stays alive until ``stop()``, whatever the caller holds.
    func start() {
        let begin = state.withLock { s in
            guard !s.running else { return false }
            s.running = true
            return true
        }
        guard begin else { return }
        // The network thread holds a reference until stop(): callbacks never see a freed client.
        mosquitto_user_data_set(handle, Unmanaged.passRetained(self).toOpaque())
        // Our own thread, not mosquitto_loop_start: libmosquitto's thread gives up for good after
        // a first attempt that failed (eclipse-mosquitto/mosquitto#1903: a broker not up yet when
        // the Pi boots) and after a TLS error, and retrying from another thread while it runs
        // races it inside OpenSSL (a crash seen in CI). Every connect, read and write happens
        // here; publish and subscribe from other threads only queue (threaded mode).
        mosquitto_threaded_set(handle, true)
        let thread = Thread { [self] in networkLoop() }
        thread.name = "mosquitto loop"
        thread.start()
    }

    /// Connects, runs the connection until it drops, waits the backoff (doubling from
    /// `reconnectDelay` to `reconnectDelayMax`, back to the start after a connection), and again,
    /// until ``stop()``.
    private func networkLoop() {
        defer { loopFinished.signal() }
        var delay = Double(max(options.reconnectDelay, 1))
        while state.withLock({ $0.running }) {
            let rc = mosquitto_connect_async(handle, options.host, Int32(options.port), Int32(options.keepalive))
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                // Until the connection drops or fails; after stop(), up to a second more to send
                // the DISCONNECT that stop() queued (so the broker drops the last will).
                var loop = MOSQ_ERR_SUCCESS.rawValue
                var stopping: DispatchTime?
                while loop == MOSQ_ERR_SUCCESS.rawValue {
                    if stopping == nil, !state.withLock({ $0.running }) { stopping = .now() + 1 }
                    if let stopping, DispatchTime.now() >= stopping { break }
                    loop = mosquitto_loop(handle, stopping == nil ? 1000 : 100, 1)
                }
                if state.withLock({ $0.hadConnection }) { delay = Double(max(options.reconnectDelay, 1)) }
                state.withLock { $0.hadConnection = false }
            } else {
                failedToConnect("cannot connect: \(Self.describe(rc)); retrying")
            }
            guard state.withLock({ $0.running }) else { break }
            _ = wake.wait(timeout: .now() + delay)
            delay = min(delay * 2, Double(max(options.reconnectDelayMax, options.reconnectDelay, 1)))
        }
    }

    /// An attempt that failed before it reached the broker: reported once per distinct reason.
    private func failedToConnect(_ problem: String) {
        let report = state.withLock { s in
            // Keep libmosquitto's own text (the TLS error) when its log callback gave one.
            guard s.problem == nil || s.lastReported != problem else { return false }
            if s.problem == nil { s.problem = "\(endpoint): \(problem)" }
            s.lastReported = problem
            return true
        }
        if report { onEvent(self, .error(problem)) }
    }

    /// Disconnects (no last will: the caller published its own goodbye) and joins the network
    /// thread (within about a second). Waiters fail as transient.
    func stop() {
        let (wasRunning, waiters) = state.withLock { s in
            defer { s.connectionWaiters = [:]; s.running = false; s.connected = false }
            return (s.running, Array(s.connectionWaiters.values))
        }
        guard wasRunning else { return }
        mosquitto_disconnect(handle)
        wake.signal()
        loopFinished.wait()
        for w in waiters { w.resume(throwing: DeliveryFailure.transient("the MQTT client stopped")) }
        Unmanaged.passUnretained(self).release()
    }

    // MARK: Publishing

    /// Publishes without waiting for the broker (state, discovery, availability); returns false
    /// when libmosquitto refused it (not connected, …).
    @discardableResult
    func publish(_ topic: String, _ payload: [UInt8], qos: Int32 = 1, retain: Bool) -> Bool {
        var mid: Int32 = 0
        let rc = mosquitto_publish(handle, &mid, topic, Int32(payload.count), payload, qos, retain)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return false }
        if qos > 0 {
            state.withLock { s in
                if case .acknowledged = s.publishes[mid] { s.publishes[mid] = nil } else { s.publishes[mid] = .ignored }
            }
        }
        return true
    }

    /// Waits for a connection, publishes at QoS 1 and returns the message id once the broker's
    /// PUBACK arrived, all before `deadline`. Throws ``DeliveryFailure``: permanent when the
    /// broker refused our credentials, transient otherwise.
    func publishAcknowledged(_ topic: String, _ payload: [UInt8], retain: Bool = false,
                             timeout seconds: Double) async throws -> Int32 {
        let deadline = DispatchTime.now() + seconds
        try await waitUntilConnected(deadline: deadline, seconds: seconds)
        var messageID: Int32 = 0
        let rc = mosquitto_publish(handle, &messageID, topic, Int32(payload.count), payload, 1, retain)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw DeliveryFailure.transient("MQTT publish to \(endpoint) failed: \(Self.describe(rc))")
        }
        let mid = messageID
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            let early = state.withLock { s -> Int32? in
                if case let .acknowledged(reason) = s.publishes[mid] { s.publishes[mid] = nil; return reason }
                s.publishes[mid] = .waiting(c)
                return nil
            }
            if let reason = early {
                if let refusal = refusal(reason, mid: mid) { c.resume(throwing: refusal) } else { c.resume() }
                return
            }
            DispatchQueue.global().asyncAfter(deadline: deadline) { [self] in
                let late = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                    guard case let .waiting(w) = s.publishes[mid] else { return nil }
                    s.publishes[mid] = .ignored
                    return w
                }
                late?.resume(throwing: DeliveryFailure.transient(
                    "no PUBACK from the MQTT broker at \(endpoint) within \(seconds) s (message \(mid))"))
            }
        }
        return mid
    }

    private func waitUntilConnected(deadline: DispatchTime, seconds: Double) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { s -> Result<Int?, DeliveryFailure> in
                if s.connected { return .success(nil) }
                if s.refusedForGood { return .failure(.permanent(s.problem ?? "refused by the broker")) }
                if !s.running { return .failure(.transient("the MQTT client is not running")) }
                s.nextWaiter += 1
                s.connectionWaiters[s.nextWaiter] = c
                return .success(s.nextWaiter)
            }
            switch outcome {
            case .failure(let failure): c.resume(throwing: failure)
            case .success(nil): c.resume()
            case .success(let id?):
                DispatchQueue.global().asyncAfter(deadline: deadline) { [self] in
                    let (late, problem) = state.withLock { s in (s.connectionWaiters.removeValue(forKey: id), s.problem) }
                    late?.resume(throwing: DeliveryFailure.transient(
                        "not connected to the MQTT broker at \(endpoint) within \(seconds) s" + (problem.map { ": \($0)" } ?? "")))
                }
            }
        }
    }

    /// Subscribes at QoS 1 (call from the `.connected` event: the session is clean). Over an
    /// unbounded connection (a broker without MQTT 5) nothing is subscribed: one message of any
    /// size could otherwise take the whole memory of the process. Returns whether it subscribed.
    @discardableResult
    func subscribe(_ topic: String) -> Bool {
        guard !state.withLock({ $0.unbounded }) else { return false }
        return mosquitto_subscribe(handle, nil, topic, 1) == MOSQ_ERR_SUCCESS.rawValue
    }

    /// Sets the CONNECT properties every later connection attempt sends (with MQTT 5), or clears
    /// them (`maximumPacketSize` nil, before falling back to 3.1.1, which has none).
    ///
    /// libmosquitto 2.0 takes CONNECT properties only in the blocking `mosquitto_connect_bind_v5`,
    /// which keeps them in the client before it checks the address; the network thread connects
    /// asynchronously (`mosquitto_connect_async` sends the kept properties), so the properties
    /// are handed over with a port of -1, which stops that call before any network I/O with
    /// MOSQ_ERR_INVAL. That the broker then honours the size is tested against the real broker
    /// (MQTTBoundedTests).
    private static func setConnectProperties(_ h: OpaquePointer, maximumPacketSize: Int?) -> Int32 {
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if let size = maximumPacketSize {
            let rc = mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue),
                                                  UInt32(clamping: max(size, 128)))
            guard rc == MOSQ_ERR_SUCCESS.rawValue else { return rc }
        }
        let rc = mosquitto_connect_bind_v5(h, "localhost", -1, 60, nil, properties)
        return rc == MOSQ_ERR_INVAL.rawValue ? MOSQ_ERR_SUCCESS.rawValue : rc
    }

    // MARK: Callbacks (network thread)

    private func connected(_ rc: Int32) {
        if rc == 0 {
            let (waiters, unbounded) = state.withLock { s in
                s.connected = true
                s.hadConnection = true
                s.problem = nil
                s.lastReported = nil
                s.refusedForGood = false
                defer { s.connectionWaiters = [:] }
                return (Array(s.connectionWaiters.values), s.unbounded)
            }
            onEvent(self, .connected(bounded: !unbounded))
            for w in waiters { w.resume() }
            return
        }
        let unbounded = state.withLock { $0.unbounded }
        // A broker without MQTT 5 (mosquitto before 1.6, some embedded brokers) answers our
        // CONNECT with "unacceptable protocol version" (libmosquitto reports MQTT 5's 132). The
        // next attempts speak 3.1.1 and subscribe to nothing: alerts still go out.
        if !unbounded, rc == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue) {
            state.withLock { $0.unbounded = true }
            _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
            _ = Self.setConnectProperties(handle, maximumPacketSize: nil)
            let reason = "the MQTT broker at \(endpoint) does not speak MQTT 5, so it cannot be told the largest message "
                + "to send us; connecting with MQTT 3.1.1 to publish only (nothing is subscribed: no acknowledgements "
                + "or Home Assistant restarts over MQTT)"
            onEvent(self, .refused(reason: reason, permanent: false))
            return
        }
        // Only a protocol version or a client id cannot change while the bridge runs (after the
        // fallback, 3.1.1's codes 1 and 2; MQTT 5's 133; MQTT 5's 132 is the fallback above): a
        // broker whose password file or auth plugin is being reloaded refuses good credentials
        // for a moment (3.1.1's 4 and 5, MQTT 5's 134, 135), and a fall alert must not be given
        // up for that. They are retried like an unreachable broker (and logged as an error every
        // time, so wrong credentials do not go unnoticed).
        let permanent = unbounded ? (rc == 1 || rc == 2) : rc == Int32(MQTT_RC_CLIENTID_NOT_VALID.rawValue)
        let text = unbounded ? String(cString: mosquitto_connack_string(rc)) : String(cString: mosquitto_reason_string(rc))
        let reason = "the MQTT broker at \(endpoint) refused the connection: \(text)"
        let waiters = state.withLock { s in
            s.connected = false
            s.problem = reason
            s.refusedForGood = permanent
            defer { if permanent { s.connectionWaiters = [:] } }
            return permanent ? Array(s.connectionWaiters.values) : []
        }
        onEvent(self, .refused(reason: reason, permanent: permanent))
        for w in waiters { w.resume(throwing: DeliveryFailure.permanent(reason)) }
    }

    private func disconnected(_ rc: Int32) {
        let reason = rc == 0 ? "disconnected" : "connection to \(endpoint) lost: \(Self.describe(rc))"
        let wasConnected = state.withLock { s in
            defer { s.connected = false; if s.problem == nil { s.problem = reason } }
            return s.connected
        }
        if wasConnected { onEvent(self, .disconnected(reason: reason)) }
    }

    private func libraryError(_ text: String) {
        let report = state.withLock { s in
            let problem = "\(endpoint): \(text)"
            guard !s.connected, s.problem != problem else { return false }
            s.problem = problem
            return true
        }
        if report { onEvent(self, .error(text)) }
    }

    private func acknowledged(_ mid: Int32, reason: Int32) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, any Error>? in
            switch s.publishes[mid] {
            case .waiting(let w)?: s.publishes[mid] = nil; return w
            case .ignored?: s.publishes[mid] = nil; return nil
            case .acknowledged?, nil: s.publishes[mid] = .acknowledged(reason: reason); return nil
            }
        }
        guard let waiter else { return }
        if let refusal = refusal(reason, mid: mid) { waiter.resume(throwing: refusal) } else { waiter.resume() }
    }

    /// A PUBACK reason of 128 or more as a delivery failure: permanent where the broker's own
    /// rules refuse the message (not authorised, topic or payload invalid: retrying cannot help
    /// until someone changes them), transient otherwise (quota, busy, its own error).
    private func refusal(_ reason: Int32, mid: Int32) -> DeliveryFailure? {
        guard reason >= 128 else { return nil }
        let text = "the MQTT broker at \(endpoint) refused message \(mid): \(String(cString: mosquitto_reason_string(reason))) (reason \(reason))"
        let permanent = [Int32(MQTT_RC_NOT_AUTHORIZED.rawValue), Int32(MQTT_RC_TOPIC_NAME_INVALID.rawValue),
                         Int32(MQTT_RC_PAYLOAD_FORMAT_INVALID.rawValue)].contains(reason)
        return permanent ? .permanent(text) : .transient(text)
    }
}

/// A problem setting up the MQTT client (bad TLS files, out of memory).
public struct MQTTError: Error, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
