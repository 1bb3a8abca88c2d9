import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether Debian's broker and clients are installed (`tools/setup-debian`); tests that need
/// them skip with this reason otherwise.
public let mosquittoMissing: String? = {
    for tool in ["/usr/sbin/mosquitto", "/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_pub", "/usr/bin/mosquitto_passwd"]
    where !FileManager.default.isExecutableFile(atPath: tool) {
        return "\(tool) is not installed (tools/setup-debian installs mosquitto and mosquitto-clients)"
    }
    return nil
}()

/// A self-signed certificate and key made by `openssl`.
public func selfSignedCertificate(_ subject: String, ip: String? = nil) -> (cert: String, key: String) {
    let folder = temporaryFolder("mosquitto-cert")
    _ = try? run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                      "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem", "-days", "2",
                                      "-subj", "/CN=\(subject)"] + (ip.map { ["-addext", "subjectAltName=IP:\($0)"] } ?? []))
    return (folder + "/cert.pem", folder + "/key.pem")
}

/// The broker's certificate, for 127.0.0.1.
public let brokerCertificate = selfSignedCertificate("127.0.0.1", ip: "127.0.0.1")
/// A client certificate the broker trusts when asked to require one.
public let clientCertificate = selfSignedCertificate("fallguard-bridge")

/// A real `mosquitto` on 127.0.0.1 and a free port, with its configuration and log in a
/// temporary folder; optionally with a password file (anonymous clients refused).
/// @unchecked: `process` is set by `start` and `stop`, which a test calls from one task at a time.
public final class MosquittoBroker: @unchecked Sendable {
    public let port: Int
    public let folder: String
    private var process: Process?
    public var log: String { (try? String(contentsOfFile: folder + "/broker.log", encoding: .utf8)) ?? "" }

    /// - Parameter tls: the broker's certificate and key (self-signed: clients trust the
    ///   certificate itself as their CA).
    /// - Parameter acl: the lines of an `acl_file` (mosquitto's access rules), if any.
    public init(users: [String: String] = [:], tls: (cert: String, key: String)? = nil,
         requireClientCertificate: Bool = false, acl: String? = nil) async throws {
        port = freeLoopbackPort()
        folder = temporaryFolder("mosquitto")
        var config = """
            listener \(port) 127.0.0.1
            persistence false
            log_dest file \(folder)/broker.log
            log_type all
            user root

            """
        if let tls {
            // The broker checks client certificates against its cafile: the client's own.
            let cafile = requireClientCertificate ? clientCertificate.cert : tls.cert
            config += "cafile \(cafile)\ncertfile \(tls.cert)\nkeyfile \(tls.key)\n"
            if requireClientCertificate { config += "require_certificate true\n" }
        }
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let passwords = folder + "/passwords"
            _ = FileManager.default.createFile(atPath: passwords, contents: nil)
            for (user, password) in users {
                try run("/usr/bin/mosquitto_passwd", ["-b", passwords, user, password])
            }
            config += "allow_anonymous false\npassword_file \(passwords)\n"
        }
        if let acl {
            try acl.write(toFile: folder + "/acl", atomically: true, encoding: .utf8)
            config += "acl_file \(folder)/acl\n"
        }
        try config.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try await start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Starts the broker and waits until it listens.
    public func start() async throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", folder + "/mosquitto.conf"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        let listening = log.components(separatedBy: "running").count
        try p.run()
        process = p
        guard await waitForLog(timeout: 5, { $0.components(separatedBy: "running").count > listening }) else {
            throw BrokerError("mosquitto did not start on port \(port):\n\(log)")
        }
    }

    /// Stops the broker and waits for it to exit. SIGKILL: children of the test process inherit
    /// a signal mask that blocks SIGTERM, and the broker keeps nothing on disk anyway.
    public func stop() {
        guard let p = process else { return }
        process = nil
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    /// Polls the broker's log until `condition` holds.
    public func waitForLog(timeout: Double, _ condition: (String) -> Bool) async -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition(log) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(log)
    }

    /// Waits until the broker has acknowledged a subscription of the client `id`.
    public func waitForSubscription(of id: String, timeout: Double = 5) async -> Bool {
        await waitForLog(timeout: timeout) { $0.contains("Sending SUBACK to \(id)") }
    }

    /// Waits until `client` has connected `times` times in all.
    public func waitForConnection(of client: String, times: Int = 1, timeout: Double = 5) async -> Bool {
        await waitForLog(timeout: timeout) { $0.components(separatedBy: "Sending CONNACK to \(client) (0").count > times }
    }
}

public struct BrokerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

@discardableResult
public func run(_ tool: String, _ arguments: [String]) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = arguments
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    try p.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { throw BrokerError("\(tool) \(arguments.joined(separator: " ")): \(text)") }
    return text
}

/// A real `mosquitto_sub` that collects `count` messages (`<topic> <qos> <retained> <payload>`
/// per line) or gives up after `timeout` seconds.
/// @unchecked: the process and pipe are set up in `init` and only read after.
public final class Subscriber: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    public let id = "sub-" + UUID().uuidString.prefix(8)

    /// Starts and returns once the broker has acknowledged the subscription.
    public init(_ broker: MosquittoBroker, topics: [String], count: Int, timeout: Int = 5) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        process.arguments = ["-h", "127.0.0.1", "-p", String(broker.port), "-i", id, "-q", "1",
                             "-C", String(count), "-W", String(timeout), "-F", "%t %q %r %p"]
            + topics.flatMap { ["-t", $0] }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard await broker.waitForSubscription(of: id) else { throw BrokerError("mosquitto_sub did not subscribe:\n\(broker.log)") }
    }

    /// The lines received, once `mosquitto_sub` has exited.
    public func lines() async -> [String] {
        let (process, output) = (self.process, self.output)
        return await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
    }
}

/// Publishes one message with the real `mosquitto_pub` (`retain`: the broker keeps it).
public func mosquittoPublish(_ broker: MosquittoBroker, topic: String, _ message: String, retain: Bool = false) throws {
    try run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", topic, "-m", message]
        + (retain ? ["-r"] : []))
}
