import Foundation

public let receiverScript = repositoryRoot + "/tools/notify-receiver/receiver.py"
public let twilioSID = "AC0123456789abcdef0123456789abcdef"
public let twilioToken = "test-token"

public struct ReceivedRequest: Decodable, Sendable {
    public var t: Double
    /// `POST` or `GET` (nil from lines of an older receiver).
    public var method: String?
    public var path: String
    public var headers: [String: String]
    public var body: String
    public var status: Int
    public var auth_ok: Bool?
    public var signature_ok: Bool?
    public var form: [String: String]?
    /// A GET's query, first values.
    public var query: [String: String]?

    public func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
}

/// tools/notify-receiver/receiver.py on 127.0.0.1, started for one test.
public final class Receiver: @unchecked Sendable {
    public let folder = temporaryFolder()
    public var logPath: String { folder + "/requests.jsonl" }
    public private(set) var port: Int = 0
    private var process: Process?

    /// Starts the receiver (on `port`, or a free one) with extra arguments.
    public init(port: Int = 0, _ arguments: [String] = []) throws {
        try start(port: port, arguments)
    }

    public func start(port: Int = 0, _ arguments: [String] = []) throws {
        let portFile = folder + "/port-\(UUID().uuidString)"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [receiverScript, "--port", String(port), "--port-file", portFile, "--log", logPath,
                       "--twilio-sid", twilioSID, "--twilio-token", twilioToken] + arguments
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let s = try? String(contentsOfFile: portFile, encoding: .utf8), let n = Int(s) { self.port = n; return }
            guard p.isRunning else { break }
            usleep(20_000)
        }
        throw ReceiverError.didNotStart
    }

    public func stop() {
        guard let p = process, p.isRunning else { return }
        // The log is written line by line: nothing is lost by SIGKILL.
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    public var base: String { "http://127.0.0.1:\(port)" }

    /// Adds an inbound SMS to the Messages list, as a contact's phone would (`sentAt`: Unix time).
    public func inbound(from: String, body: String, sentAt: Double? = nil, to: String = "+15005550006") throws {
        var fields: [String: Any] = ["from": from, "to": to, "body": body]
        if let sentAt { fields["date_sent"] = sentAt }
        try control("/_test/inbound", fields)
    }

    /// How calls to `to` made from now on go: `ringing@0.5,no-answer@2`, `completed@2/machine_start`.
    public func callScript(_ to: String, _ script: String) throws {
        try control("/_test/call-script", ["to": to, "script": script])
    }

    private func control(_ path: String, _ fields: [String: Any]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let json = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        p.arguments = ["-c", """
            import sys, urllib.request
            r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method="POST",
                                       headers={"Content-Type": "application/json"}), timeout=5)
            sys.exit(0 if r.status in (200, 201) else 1)
            """, base + path, json]
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw ReceiverError.controlFailed(path) }
    }

    public var requests: [ReceivedRequest] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(ReceivedRequest.self, from: Data($0.utf8)) }
    }

    deinit { stop() }
}

public enum ReceiverError: Error { case didNotStart, controlFailed(String) }

