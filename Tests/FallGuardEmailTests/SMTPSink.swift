import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's python3 with aiosmtpd (`tools/setup-debian` installs python3-aiosmtpd).
let sinkPython = "/usr/bin/python3"
let smtpSinkMissing: String? = {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: sinkPython)
    p.arguments = ["-c", "import aiosmtpd"]
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return "\(sinkPython) is missing" }
    p.waitUntilExit()
    return p.terminationStatus == 0 ? nil : "python3-aiosmtpd is not installed (tools/setup-debian installs it)"
}()
let opensslMissing: String? = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") ? nil : "/usr/bin/openssl is missing"

let sinkScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("smtp-sink.py").path

func temporaryFolder(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "fallguard-\(name)-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A free TCP port on 127.0.0.1; with `listening`, a socket that accepts connections into its
/// backlog and never answers (returned so the caller keeps it open).
func loopbackPort(listening: Bool = false) -> (port: Int, fd: Int32) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    if listening { listen(fd, 8) } else { close(fd) }
    return (Int(UInt16(bigEndian: address.sin_port)), listening ? fd : -1)
}

/// A self-signed certificate for 127.0.0.1, made once by `openssl`.
let testCertificate: (cert: String, key: String) = {
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
struct ReceivedMail: Decodable {
    var mail_from: String
    var rcpt_tos: [String]
    var tls: Bool
    var login: String?
    var headers: [String: String]
    var date_parsed: String?
    var content_type: String
    var charset: String?
    var body: String
    var defects: [String]
    var raw: String
}

/// The real SMTP server (aiosmtpd) on 127.0.0.1 and a free port, started by the test.
final class SMTPSink: @unchecked Sendable {
    let port: Int
    let folder: String
    private let process = Process()

    init(tls: Bool = false, implicitTLS: Bool = false, user: String? = nil, password: String? = nil) async throws {
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
    func mail(_ number: Int = 1) async throws -> ReceivedMail {
        let path = "\(folder)/\(number).json"
        for _ in 0..<250 where !FileManager.default.fileExists(atPath: path) {
            try await Task.sleep(for: .milliseconds(20))
        }
        return try JSONDecoder().decode(ReceivedMail.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// How many messages arrived.
    var count: Int { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".json") }.count }
}

struct SinkError: Error, CustomStringConvertible { var description: String }
