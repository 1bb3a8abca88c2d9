import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's python3 with aiosmtpd (`tools/setup-debian` installs python3-aiosmtpd).
public let sinkPython = "/usr/bin/python3"
public let smtpSinkMissing: String? = {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: sinkPython)
    p.arguments = ["-c", "import aiosmtpd"]
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return "\(sinkPython) is missing" }
    p.waitUntilExit()
    return p.terminationStatus == 0 ? nil : "python3-aiosmtpd is not installed (tools/setup-debian installs it)"
}()
public let opensslMissing: String? = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") ? nil : "/usr/bin/openssl is missing"

public let sinkScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("smtp-sink.py").path

/// A self-signed certificate for 127.0.0.1, made once by `openssl`.
public let testCertificate: (cert: String, key: String) = {
    let folder = temporaryFolder("smtp-cert")
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    p.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                   "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem", "-days", "2",
                   "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try? p.run()
    p.waitUntilExit()
    return (folder + "/cert.pem", folder + "/key.pem")
}()

/// What the sink recorded about one message, decoded by Python's e-mail parser.
public struct ReceivedMail: Decodable {
    public var mail_from: String
    public var rcpt_tos: [String]
    public var tls: Bool
    public var login: String?
    public var headers: [String: String]
    public var date_parsed: String?
    public var content_type: String
    public var charset: String?
    public var body: String
    public var defects: [String]
    public var raw: String
}

/// The real SMTP server (aiosmtpd) on 127.0.0.1 and a free port, started by the test.
/// @unchecked: immutable after `init` (the process handle is only killed in `deinit`).
public final class SMTPSink: @unchecked Sendable {
    public let port: Int
    public let folder: String
    private let process = Process()

    public init(tls: Bool = false, implicitTLS: Bool = false, user: String? = nil, password: String? = nil) async throws {
        port = loopbackPort().port
        folder = temporaryFolder("smtp-sink")
        var arguments = [sinkScript, "--port", String(port), "--folder", folder]
        if tls || implicitTLS { arguments += ["--cert", testCertificate.cert, "--key", testCertificate.key] }
        if implicitTLS { arguments.append("--implicit-tls") }
        if let user, let password { arguments += ["--user", user, "--password", password] }
        process.executableURL = URL(fileURLWithPath: sinkPython)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ready = await withCheckedContinuation { c in
            DispatchQueue.global().async { c.resume(returning: out.fileHandleForReading.availableData) }
        }
        guard String(decoding: ready, as: UTF8.self).hasPrefix("ready") else {
            throw SinkError(description: "the SMTP sink did not start on port \(port)")
        }
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The `number`th message received (1 first), waiting up to 5 s for it.
    public func mail(_ number: Int = 1) async throws -> ReceivedMail {
        let path = "\(folder)/\(number).json"
        for _ in 0..<250 where !FileManager.default.fileExists(atPath: path) {
            try await Task.sleep(for: .milliseconds(20))
        }
        return try JSONDecoder().decode(ReceivedMail.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// How many messages arrived.
    public var count: Int { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".json") }.count }
}

public struct SinkError: Error, CustomStringConvertible { public var description: String }
