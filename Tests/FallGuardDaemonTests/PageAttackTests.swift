@testable import FallGuardDaemon
import FallGuardCore
import FallGuardFieldTest
import FallGuardTestSupport
import FallGuardWeb
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import Testing

/// The attacks on the page of issue 28 (items 1-6 and the label's 500), each replayed against
/// the real server (``MetricsEndpoint`` with a ``WebSite``, on loopback) with curl, openssl and
/// raw sockets. A second client is a second loopback address (127.0.0.2).
@Suite(.serialized) struct PageAttackTests {
    static let password = "correct horse battery"

    /// The page's server, its site, and what it logged.
    struct Page {
        let port: Int
        let site: WebSite
        let log: LogLines
        let folder: String
        var base: String { "http://127.0.0.1:\(port)" }
    }

    /// Runs `body` against a page on 127.0.0.1 with these settings, then stops the server.
    static func withPage(password: String?, sessionHours: Double = 12, tls: Bool = false,
                         requestDeadline: Duration = ClientLimits.requestDeadline,
                         maximumConnections: Int = MetricsEndpoint.maximumConnections,
                         _ body: (Page) async throws -> Void) async throws {
        let folder = temporaryFolder("page-attack")
        let port = freeLoopbackPort()
        let log = LogLines()
        let logger = Logger(label: "test.web") { _ in CollectingLogHandler(lines: log) }
        let site = WebSite(access: WebAccess(password: password, sessionHours: sessionHours), live: LiveSignal(),
                           loopbackOnly: true, secure: tls, status: { "{}" }, cachedStatus: { nil },
                           archive: IncidentArchive(folder: folder + "/incidents"), deliveries: { _ in [] }, logger: logger)
        let files = tls ? selfSignedCertificate("bridge", ip: "127.0.0.1") : nil
        let tlsConfiguration = try files.map { try MetricsEndpoint.tls(certificate: $0.cert, key: $0.key) }
        let app = try MetricsEndpoint.application(registry: PrometheusCollectorRegistry(), host: "127.0.0.1", port: port,
                                                  logger: Logger(label: "test.server"), maximumConnections: maximumConnections,
                                                  requestDeadline: requestDeadline,
                                                  web: site, tls: tlsConfiguration)
        let group = ServiceGroup(services: [app], logger: Logger(label: "test.server"))
        let server = Task { try await group.run() }
        #expect(await until(20) { Sockets.canConnect(port) }, "the server listens")
        var failure: (any Error)?
        do { try await body(Page(port: port, site: site, log: log, folder: folder)) } catch { failure = error }
        await group.triggerGracefulShutdown()
        try await server.value
        if let failure { throw failure }
    }

    /// Signs in through the form; the session cookie (`name=value`).
    static func signIn(_ page: Page, _ extra: [String] = []) throws -> String {
        let login = try curl(page.base + "/login", extra + ["--data-urlencode", "password=\(password)"])
        let setCookie = try #require(login.header("set-cookie"), "\(login.status) \(login.headers)")
        return String(setCookie.split(separator: ";")[0])
    }

    /// Item 1: `127.attacker.example` resolving to 127.0.0.1 read the page and its form token.
    @Test func aNameThatOnlyBeginsWith127IsRefused() async throws {
        try await Self.withPage(password: nil) { page in
            for path in ["/", "/incidents", "/live", "/metrics"] {
                let a = try curl(page.base + path, ["-H", "Host: 127.attacker.example:\(page.port)"], maxTime: 2)
                #expect(a.status == 421, "\(path) for 127.attacker.example: \(a.status)")
            }
            #expect(try curl(page.base + "/", ["-H", "Host: 127.0.0.1.nip.io:\(page.port)"]).status == 421)
            let own = try curl(page.base + "/")
            #expect(own.status == 200, "the page itself on 127.0.0.1")
            // The Date header is written by arithmetic now (HTTPServer), not by Hummingbird's cache.
            let date = try #require(own.header("date"), "\(own.headers)")
            #expect(date.wholeMatch(of: /(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT/) != nil, "\(date)")
            #expect(date == httpDate(secondsSince1970: time(nil)) || date == httpDate(secondsSince1970: time(nil) - 1), "\(date)")
            #expect(own.header("server") == "fallguard")
        }
    }

    /// Items 2 and 3: HTTP Basic on `/metrics` was an unthrottled, unlogged password oracle, and
    /// the one throttle was global. Now every check counts against its client only, is logged,
    /// and the sign-in line names the peer, not the Host header.
    @Test func everyPasswordCheckIsThrottledPerClientAndLogged() async throws {
        try await Self.withPage(password: Self.password) { page in
            for i in 0..<WebAccess.throttleLimit {
                #expect(try curl(page.base + "/metrics", ["-u", "prometheus:guess-\(i)"]).status == 401)
            }
            let sixth = try curl(page.base + "/metrics", ["-u", "prometheus:\(Self.password)"])
            #expect(sixth.status == 429 && sixth.header("retry-after") != nil, "the right password is not even compared now: \(sixth.status)")
            let form = try curl(page.base + "/login", ["--data-urlencode", "password=\(Self.password)"])
            #expect(form.status == 429, "the form shares the client's throttle: \(form.status)")
            let other = ["--interface", "127.0.0.2"]
            #expect(try curl(page.base + "/metrics", other + ["-u", "prometheus:\(Self.password)"]).status == 200,
                    "another client is not kept out")
            _ = try Self.signIn(page, other + ["-H", "Host: attacker.example"])
            let lines = page.log.all
            #expect(lines.filter { $0.contains("a wrong password from 127.0.0.1 (/metrics)") }.count == WebAccess.throttleLimit, "\(lines)")
            #expect(lines.filter { $0.contains("wrong passwords from 127.0.0.1 within 60 s") }.count == 1, "\(lines)")
            #expect(lines.contains { $0.contains("signed in from 127.0.0.2") }, "\(lines)")
            #expect(!lines.contains { $0.contains("attacker.example") || $0.contains(Self.password) }, "\(lines)")
        }
    }

    /// Many clients' wrong passwords together stay within the log's budget (30 lines a minute),
    /// and every one is still refused.
    @Test func passwordLinesFromManyClientsStayWithinTheBudget() async throws {
        try await Self.withPage(password: Self.password) { page in
            for client in 10..<18 {
                for i in 0..<WebAccess.throttleLimit {
                    let a = try curl(page.base + "/metrics", ["--interface", "127.0.0.\(client)", "-u", "prometheus:guess-\(i)"])
                    #expect(a.status == 401, "127.0.0.\(client), guess \(i): \(a.status)")
                }
            }
            let wrong = page.log.all.filter { $0.contains("a wrong password from") }
            #expect(wrong.count == page.site.passwordLines.perMinute, "40 wrong passwords, \(wrong.count) lines")
        }
    }

    /// Item 4: a stream opened before sign-out kept streaming after it.
    @Test func aStreamEndsWhenItsSessionSignsOut() async throws {
        try await Self.withPage(password: Self.password) { page in
            let cookie = try Self.signIn(page)
            let stream = try BackgroundCurl(page.base + "/live", ["-b", cookie], maxTime: 30)
            #expect(await until(10) { stream.output.contains("event: status") }, "the stream runs: \(stream.output)")
            let main = try curl(page.base + "/", ["-b", cookie])
            let token = try #require(main.body.range(of: "name=\"csrf\" value=\"").map { String(main.body[$0.upperBound...].prefix(64)) })
            #expect(try curl(page.base + "/logout", ["-b", cookie, "--data", "csrf=\(token)"]).status == 303)
            #expect(await until(5) { !stream.isRunning }, "the stream ends with its session")
            stream.stop()
        }
    }

    /// Item 4: session expiry likewise.
    @Test func aStreamEndsWhenItsSessionExpires() async throws {
        try await Self.withPage(password: Self.password, sessionHours: 4.0 / 3600) { page in
            let cookie = try Self.signIn(page)
            let stream = try BackgroundCurl(page.base + "/live", ["-b", cookie], maxTime: 30)
            #expect(await until(4) { stream.output.contains("event: status") }, "the stream runs: \(stream.output)")
            #expect(await until(8) { !stream.isRunning }, "the stream ends when the 4 s session does")
            stream.stop()
        }
    }

    /// Item 5: half-sent requests and refused requests filled the shared 16 connections, and the
    /// page and `/metrics` timed out. Now a whole request must come within the deadline, one
    /// client holds at most 8 connections (the oldest waiting one makes room for a new one), and
    /// a refusal ends its connection. The attacker and the owner share 127.0.0.1 here.
    @Test func nobodyWithoutASessionCanHoldThePage() async throws {
        try await Self.withPage(password: Self.password, requestDeadline: .seconds(2)) { page in
            let halfSent = (0..<40).map { _ in Sockets.connect(page.port) }
            let refused = (0..<10).map { _ in Sockets.connect(page.port) }
            halfSent.forEach { Sockets.send($0, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n") }
            refused.forEach { Sockets.send($0, "GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") }
            try await Task.sleep(for: .milliseconds(300))
            let scrape = try curl(page.base + "/metrics", ["-u", "prometheus:\(Self.password)"], maxTime: 3)
            #expect(scrape.status == 200, "a scraper gets in beside them: \(scrape.status)")
            let cookie = try Self.signIn(page)
            #expect(try curl(page.base + "/", ["-b", cookie], maxTime: 3).status == 200, "and the owner")
            #expect(await until(4) { refused.allSatisfy(Sockets.closedByPeer) }, "a refusal ends its connection")
            #expect(await until(5) { halfSent.allSatisfy(Sockets.closedByPeer) }, "no half-sent request outlives the deadline")
            (halfSent + refused).forEach { close($0) }
        }
    }

    /// Item 5: streams are capped per client and in all, below the connection cap.
    @Test func streamsAreCappedPerClientAndInAll() async throws {
        try await Self.withPage(password: nil) { page in
            // Samples at 40 Hz, as the sensor offers them: a stream whose page went away finds
            // out at its next write.
            let sensor = Task {
                var i = 0.0
                while !Task.isCancelled {
                    let now = Date().timeIntervalSince1970
                    page.site.live.offer(AccelerationSample(time: i, x: 0, y: 0, z: 1), monotonicNow: i, wallNow: now)
                    i += 0.025
                    try? await Task.sleep(for: .milliseconds(25))
                }
            }
            defer { sensor.cancel() }
            var streams: [BackgroundCurl] = []
            for source in ["127.0.0.1", "127.0.0.2"] {
                for _ in 0..<ClientLimits.streamsPerClient {
                    streams.append(try BackgroundCurl(page.base + "/live", ["--interface", source], maxTime: 20))
                }
            }
            #expect(await until(10) { streams.allSatisfy { $0.output.contains("event: status") } }, "8 streams run")
            let more = try curl(page.base + "/live", maxTime: 2)
            #expect(more.status == 503 && more.header("retry-after") != nil, "a fifth stream of one client: \(more.status)")
            #expect(try curl(page.base + "/live", ["--interface", "127.0.0.3"], maxTime: 2).status == 503, "a ninth in all")
            #expect(try curl(page.base + "/", maxTime: 2).status == 200, "the page itself still answers")
            streams.forEach { $0.stop() }
            #expect(await until(5) { (try? curl(page.base + "/live", maxTime: 1).status) == 200 }, "slots come back when streams end")
        }
    }

    /// Item 6: TLS 1.0 and 1.1 were accepted.
    @Test func tlsBelow1_2IsRefused() async throws {
        try await Self.withPage(password: Self.password, tls: true) { page in
            func handshake(_ version: String) throws -> String {
                let r = try runCommand("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(page.port)", version,
                                                            "-cipher", "DEFAULT@SECLEVEL=0"])
                return r.stdout + r.stderr
            }
            let modern = try handshake("-tls1_2")
            #expect(modern.contains("Protocol  : TLSv1.2") && !modern.contains("Cipher is (NONE)"), "TLS 1.2 works: \(modern.suffix(800))")
            for old in ["-tls1", "-tls1_1"] {
                let out = try handshake(old)
                #expect(out.contains("Cipher is (NONE)"), "\(old) is refused: \(out.suffix(800))")
            }
        }
    }

    /// Over TLS, a closed connection waited up to 5 s for the peer's close_notify (curl sends
    /// a FIN without one) and stayed counted: the ninth request of a client was reset.
    @Test func connectionsOverTLSAreNotCountedOnceThePeerHasGone() async throws {
        try await Self.withPage(password: Self.password, tls: true) { page in
            let base = "https://127.0.0.1:\(page.port)"
            for i in 0..<(3 * ClientLimits.connectionsPerClient) {
                let a = try curl(base + "/", maxTime: 2)
                #expect(a.status == 401, "request \(i) without a session: \(a.status)")
            }
            for i in 0..<(2 * ClientLimits.connectionsPerClient) {
                #expect(try curl(base + "/metrics", ["-u", "prometheus:\(Self.password)"], maxTime: 2).status == 200, "scrape \(i)")
            }
        }
    }

    /// A peer that never closes its refused or surplus TLS connections (nor answers TLS's
    /// close_notify) must not keep them counted against everybody's cap: they are shut, not
    /// left to wait 5 s for the peer. Here the cap is 16 and the attacker opens 14 from each of
    /// three addresses (each address may hold 8).
    @Test func silentPeersCannotFillTheCapOverTLS() async throws {
        try await Self.withPage(password: Self.password, tls: true, maximumConnections: 16) { page in
            let attacker = Process()
            attacker.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            attacker.arguments = ["-c", """
                import socket, ssl, sys, time
                c = ssl.create_default_context(); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE
                held = []
                for i in range(42):
                    source = ("127.0.0.%d" % (2 + i % 3), 0)
                    s = socket.create_connection(("127.0.0.1", \(page.port)), timeout=2, source_address=source)
                    try:
                        t = c.wrap_socket(s)
                        t.sendall(b"GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                        held.append(t)
                    except OSError:
                        held.append(s)
                print("held", len(held), flush=True)
                time.sleep(3)
                """]
            let out = Pipe()
            attacker.standardOutput = out
            try attacker.run()
            defer { if attacker.isRunning { kill(attacker.processIdentifier, SIGKILL) }; attacker.waitUntilExit() }
            try await Task.sleep(for: .seconds(1))
            let base = "https://127.0.0.1:\(page.port)"
            let scrape = try curl(base + "/metrics", ["-u", "prometheus:\(Self.password)"], maxTime: 2)
            #expect(scrape.status == 200, "the owner gets in while the attacker holds on: \(scrape.status)")
            let line = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(line.hasPrefix("held 42"), "the attacker's 42 connections: \(line)")
        }
    }

    /// The label of an unknown incident answered 500 with the archive's absolute path.
    @Test func labellingAnUnknownIncidentIs404WithoutAPath() async throws {
        try await Self.withPage(password: nil) { page in
            let token = try #require(page.site.access.formToken(session: nil, now: Date().timeIntervalSince1970))
            let a = try curl(page.base + "/incidents/FG-404/label", ["--data", "label=fall&csrf=\(token)"])
            #expect(a.status == 404, "\(a.status) \(a.body)")
            #expect(!a.body.contains(page.folder) && !a.body.contains("/incidents/"), "\(a.body)")
            #expect(!FileManager.default.fileExists(atPath: page.folder + "/incidents/FG-404"), "nothing written")
        }
    }
}

/// A curl left running (a stream), its output read as it comes.
final class BackgroundCurl: @unchecked Sendable {
    let process = Process()
    let file: String

    init(_ url: String, _ extra: [String], maxTime: Double) throws {
        file = temporaryFolder("stream") + "/out"
        FileManager.default.createFile(atPath: file, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-N", "-k", "--max-time", String(maxTime), "-o", file] + extra + [url]
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var output: String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
    var isRunning: Bool { process.isRunning }
    /// SIGKILL: the test process ignores SIGTERM (service lifecycle), and its children inherit that.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Raw TCP clients of 127.0.0.1, for requests no HTTP client would send.
enum Sockets {
    /// A non-blocking connection to `port`, given up to a second to be accepted into the
    /// server's backlog (a burst beyond it would connect seconds later, on the SYN's retries).
    static func connect(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        _ = poll(&p, 1, 1000)
        return fd
    }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 } }
    }

    static func send(_ fd: Int32, _ text: String) {
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// Whether the server has closed this connection (what it sent first is read and dropped).
    static func closedByPeer(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 { return true }
            if n < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
        }
    }
}

/// What a logger said, one line a message.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

struct CollectingLogHandler: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { lines.append("\(event.level): \(event.message)") }
}
