import FallGuardCore
import FallGuardFieldTest
import FallGuardWeb
import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import Logging
import NIOCore
import ServiceLifecycle

/// The page on the bridge (`web:`), on the daemon's HTTP server beside `/metrics`: `/` (now,
/// live, incidents, deliveries), `/live` (Server-Sent Events: the status when it changes and
/// |a| 5 times a second), `/incidents[/ID]` with the label buttons, `/deliveries`, and the
/// login when a password is set. Nothing of it runs while no page is open.
public struct WebSite: Sendable {
    public let access: WebAccess
    public let live: LiveSignal
    /// Served on a loopback address only (then the Host header must name loopback).
    public let loopbackOnly: Bool
    /// Served over TLS (the cookie is then Secure).
    public let secure: Bool
    /// The status as the page shows it (JSON), fresh.
    let status: @Sendable () -> String
    /// The status the status service last made for open pages: a version that changes with it, and the JSON.
    let cachedStatus: @Sendable () -> (version: Int, json: String)?
    let archive: IncidentArchive
    let deliveries: @Sendable (_ incident: String?) -> [WebDelivery]
    let logger: Logger
    /// The `/live` streams open now (capped per client and in all, see ``ClientLimits``).
    let streams = StreamSlots()
    /// The password lines of the log: 30 a minute from all clients together.
    let passwordLines = LineBudget(perMinute: 30)

    /// How often an open page gets new samples: 5 a second (the bar is 4; each update costs the
    /// bridge a few thread wake-ups, measured by bench/page-cost.sh).
    public static let interval = Duration.milliseconds(200)
    /// A comment line this often keeps proxies and the idle timeout from closing a quiet stream.
    static let keepAlive = 5.0

    static let htmlHeaders: HTTPFields = [
        .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
        HTTPField.Name("Content-Security-Policy")!: "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff", HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("X-Frame-Options")!: "DENY",
    ]

    static func now() -> Double { Date().timeIntervalSince1970 }

    func html(status: HTTPResponse.Status = .ok, _ text: String, headers extra: HTTPFields = [:]) -> Response {
        var headers = Self.htmlHeaders
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func session(_ request: Request) -> String? { WebAccess.session(inCookieHeader: request.headers[.cookie]) }

    /// A refusal: plain text, and the connection ends with it (``ConnectionGuard``), so that
    /// nobody without a session holds a connection longer than one request.
    static func refused(_ status: HTTPResponse.Status, _ text: String, headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8", .connection: "close"]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    static var foreignHost: Response { refused(.misdirectedRequest, "this page answers only to a loopback address") }

    /// nil when the request may go on; else the answer: 421 for a foreign Host on a loopback
    /// page, 401 with the login form without a valid session.
    func refusal(_ request: Request) -> Response? {
        guard access.acceptsHost(request.head.authority, loopbackOnly: loopbackOnly) else { return Self.foreignHost }
        guard access.allows(session: session(request), now: Self.now()) else {
            return html(status: .unauthorized, WebPages.login(message: nil), headers: [.connection: "close"])
        }
        return nil
    }

    /// nil when `/metrics` may be read: as the page, or with HTTP Basic (a Prometheus scraper),
    /// whose password is checked and throttled like the login form's; else the answer.
    func metricsRefusal(_ request: Request, client: String) -> Response? {
        guard access.requiresLogin else { return access.acceptsHost(request.head.authority, loopbackOnly: loopbackOnly) ? nil : Self.foreignHost }
        if access.allows(session: session(request), now: Self.now()) { return nil }
        let basic: HTTPFields = [.wwwAuthenticate: "Basic realm=\"fallguard\""]
        guard let auth = request.headers[.authorization], auth.lowercased().hasPrefix("basic "),
              let data = Data(base64Encoded: String(auth.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else {
            return Self.refused(.unauthorized, "a session or HTTP Basic with the page's password", headers: basic)
        }
        switch checkPassword(String(text[text.index(after: colon)...]), client: client, place: "/metrics") {
        case .right: return nil
        case .wrong: return Self.refused(.unauthorized, "wrong password", headers: basic)
        case let .throttled(seconds, _):
            return Self.refused(.tooManyRequests, "too many wrong passwords: try again in \(seconds) s", headers: [.retryAfter: String(seconds)])
        }
    }

    /// A password from `client` checked (``WebAccess/check(password:client:now:)``: throttled per
    /// client) and logged: every wrong one, and the first refusal of each wait, within
    /// ``passwordLines`` (the lines beyond it are counted in the next one).
    func checkPassword(_ password: String, client: String, place: String) -> WebAccess.PasswordCheck {
        let now = Self.now()
        let result = access.check(password: password, client: client, now: now)
        let line: String?
        switch result {
        case .right: line = nil
        case .wrong: line = "page: a wrong password from \(client) (\(place))"
        case let .throttled(seconds, first):
            line = first ? "page: \(WebAccess.throttleLimit) wrong passwords from \(client) within \(Int(WebAccess.throttleWindow)) s: its password checks are refused for \(seconds) s" : nil
        }
        if let line { logger.warning(line, within: passwordLines, now: now) }
        return result
    }

    /// A form's fields (application/x-www-form-urlencoded, at most 4 KiB).
    static func form(_ request: inout Request) async -> [String: String] {
        guard let body = try? await request.collectBody(upTo: 4096) else { return [:] }
        var out: [String: String] = [:]
        for pair in String(buffer: body).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if kv.count == 2 { out[kv[0]] = kv[1] } else if kv.count == 1 { out[kv[0]] = "" }
        }
        return out
    }

    /// `POST /logout` (the bridge's page and the station's): the session ends when the form
    /// carries its token (`accepts(token, session)`), and the answer sends back to the login
    /// form with the cookie cleared.
    static func logout(_ request: Request, accepts: (String?, String?) -> Bool, end: (String?) -> Void) async -> Response {
        var request = request
        let fields = await form(&request)
        let id = WebAccess.session(inCookieHeader: request.headers[.cookie])
        guard accepts(fields["csrf"], id) else { return refused(.forbidden, "missing or wrong form token") }
        end(id)
        var r = Response.redirect(to: "/login", type: .normal)
        r.headers[.setCookie] = "\(WebAccess.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        return r
    }

    /// An incident id as a folder name of the archive: nothing that could leave it.
    static func isIncidentID(_ s: Substring) -> Bool {
        !s.isEmpty && s.count <= 64 && s.first != "." && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
    }

    func addRoutes(to router: Router<BridgeRequestContext>) {
        router.get("/") { request, _ -> Response in
            if let r = refusal(request) { return r }
            let records = archive.records()
            return html(WebPages.main(incidents: WebPages.incidentsTable(Array(records.records.suffix(20)), unreadable: records.unreadable),
                                      deliveries: WebPages.deliveriesTable(deliveries(nil)),
                                      formToken: access.formToken(session: session(request), now: Self.now()),
                                      signedIn: access.requiresLogin))
        }
        router.get("page.js") { request, _ -> Response in
            if let r = refusal(request) { return r }
            return Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: WebPages.script)))
        }
        router.get("login") { request, _ -> Response in
            access.requiresLogin ? html(WebPages.login(message: nil)) : .redirect(to: "/", type: .normal)
        }
        router.post("login") { request, context -> Response in
            var request = request
            guard access.acceptsHost(request.head.authority, loopbackOnly: loopbackOnly) else { return Self.foreignHost }
            let fields = await Self.form(&request)
            switch checkPassword(fields["password"] ?? "", client: context.client, place: "login form") {
            case .right:
                logger.notice("page: signed in from \(context.client)")
                var r = Response.redirect(to: "/", type: .normal)
                r.headers[.setCookie] = access.cookie(session: access.startSession(now: Self.now()), secure: secure)
                return r
            case .wrong:
                return html(status: .unauthorized, WebPages.login(message: "Wrong password."), headers: [.connection: "close"])
            case let .throttled(seconds, _):
                return html(status: .tooManyRequests, WebPages.login(message: "Too many wrong passwords: try again in \(seconds) s."),
                            headers: [.retryAfter: String(seconds), .connection: "close"])
            }
        }
        router.post("logout") { request, _ -> Response in
            await Self.logout(request, accepts: { access.acceptsForm(token: $0, session: $1, now: Self.now()) },
                              end: { access.logout(session: $0) })
        }
        router.get("live") { request, context -> Response in
            if let r = refusal(request) { return r }
            guard let slot = streams.take(client: context.client) else {
                return Self.refused(.serviceUnavailable, "too many live streams open: at most \(streams.perClient) per client, \(streams.total) in all",
                                    headers: [.retryAfter: "5"])
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                            body: stream(on: context.eventLoop, session: session(request), slot: slot))
        }
        router.get("incidents") { request, _ -> Response in
            if let r = refusal(request) { return r }
            let records = archive.records()
            return html(WebPages.layout(title: "FallGuard: incidents", body: "<h1>Incidents</h1>" + WebPages.incidentsTable(records.records, unreadable: records.unreadable),
                                        signedIn: access.requiresLogin, formToken: access.formToken(session: session(request), now: Self.now())))
        }
        router.get("incidents/:id") { request, context -> Response in
            if let r = refusal(request) { return r }
            guard let id = context.parameters.get("id"), Self.isIncidentID(Substring(id)),
                  let record = try? archive.record(id) else { return html(status: .notFound, "<p>No such incident.</p>") }
            var signal: [AccelerationSample]?
            var problem: String?
            if FileManager.default.fileExists(atPath: archive.signalPath(of: id)) {
                do { signal = try archive.signal(of: record).samples } catch { problem = "\(error)" }
            }
            let token = access.formToken(session: session(request), now: Self.now())
            return html(WebPages.layout(title: "FallGuard: \(id)",
                                        body: WebPages.incident(record, signal: signal, deliveries: deliveries(id), formToken: token, signalProblem: problem),
                                        signedIn: access.requiresLogin, formToken: token))
        }
        router.post("incidents/:id/label") { request, context -> Response in
            var request = request
            if let r = refusal(request) { return r }
            let fields = await Self.form(&request)
            guard access.acceptsForm(token: fields["csrf"], session: session(request), now: Self.now()) else {
                logger.warning("page: a label without this page's form token was refused (from \(context.client))")
                return Self.refused(.forbidden, "missing or wrong form token")
            }
            guard let label = fields["label"].flatMap(IncidentLabel.init(rawValue:)) else { return Response(status: .badRequest) }
            // An id the archive does not hold is 404, checked before anything is written; the
            // answer never names a path (the log does, for the owner).
            guard let id = context.parameters.get("id"), Self.isIncidentID(Substring(id)),
                  FileManager.default.fileExists(atPath: archive.recordPath(of: id)) else {
                return html(status: .notFound, "<p>No such incident.</p>")
            }
            let entry = IncidentLabelEntry(label: label, by: "web page", at: iso8601(secondsSince1970: Self.now()))
            do { try archive.label(id, entry) } catch {
                logger.error("page: cannot label \(id): \(error)")
                return html(status: .internalServerError, "<p>Could not save the label (the daemon's log says why).</p>")
            }
            logger.notice("page: \(id) labelled \(label.rawValue)")
            return .redirect(to: "/incidents/\(WebPages.urlPathEscaped(id))", type: .normal)
        }
        router.get("deliveries") { request, _ -> Response in
            if let r = refusal(request) { return r }
            return html(WebPages.layout(title: "FallGuard: deliveries", body: "<h1>Deliveries</h1>" + WebPages.deliveriesTable(deliveries(nil), recent: 200),
                                        signedIn: access.requiresLogin, formToken: access.formToken(session: session(request), now: Self.now())))
        }
        router.get("fragments/incidents") { request, _ -> Response in
            if let r = refusal(request) { return r }
            let records = archive.records()
            return html(WebPages.incidentsTable(Array(records.records.suffix(20)), unreadable: records.unreadable))
        }
        router.get("fragments/deliveries") { request, _ -> Response in
            if let r = refusal(request) { return r }
            return html(WebPages.deliveriesTable(deliveries(nil)))
        }
    }

    /// The page's stream: the status at once and whenever it changes, new samples every
    /// ``interval`` while there are any, a comment every ``keepAlive`` seconds otherwise. Ends
    /// when the page goes away (a write fails), its session ends (sign-out or expiry: checked
    /// every pass), or the daemon stops; holds its `slot` until then. It sleeps on the
    /// connection's event loop timer: `Task.sleep` would add two wake-ups of Dispatch's timer
    /// thread to each update.
    func stream(on eventLoop: any EventLoop, session: String?, slot: StreamSlots.Slot) -> ResponseBody {
        ResponseBody { writer in
            let viewer = live.viewer()
            defer { withExtendedLifetime((viewer, slot)) {} }
            var next = 0, version = -1
            var quietSince = NIODeadline.now()
            try await writer.write(ByteBuffer(string: "retry: 2000\n\nevent: status\ndata: \(status())\n\n"))
            let interval = TimeAmount(Self.interval)
            while !Task.isCancelled && !Task.isShuttingDownGracefully && access.allows(session: session, now: Self.now()) {
                if let text = pumpPass(next: &next, version: &version, quietSince: &quietSince) {
                    try await writer.write(ByteBuffer(string: text))
                }
                try await eventLoop.scheduleTask(in: interval) {}.futureResult.get()
            }
            try await writer.finish(nil)
        }
    }

    /// One pass of a stream: what to send now, if anything.
    func pumpPass(next: inout Int, version: inout Int, quietSince: inout NIODeadline) -> String? {
        var out = ""
        if let s = cachedStatus(), s.version != version {
            if version != -1 { out += "event: status\ndata: \(s.json)\n\n" }
            version = s.version
        }
        let (points, after) = live.points(from: next)
        next = after
        if !points.isEmpty {
            out.reserveCapacity(out.utf8.count + 24 * points.count + 24)
            out += "event: samples\ndata: ["
            for (i, p) in points.enumerated() {
                if i > 0 { out += "," }
                // [ms, mg], and |ω| in °/s third from a sensor with a gyroscope
                out += p.degreesPerSecond < 0 ? "[\(p.wallMilliseconds),\(p.milliG)]"
                    : "[\(p.wallMilliseconds),\(p.milliG),\(p.degreesPerSecond)]"
            }
            out += "]\n\n"
        }
        let now = NIODeadline.now()
        if out.isEmpty, now - quietSince > .milliseconds(Int64(Self.keepAlive * 1000)) { out = ": still here\n\n" }
        if !out.isEmpty { quietSince = now }
        return out.isEmpty ? nil : out
    }
}

/// The request context of the bridge's server: the basic one, plus the connection's event loop
/// (the page's stream runs on it) and its client (``clientKey(_:)``: the peer's address, for
/// the throttle, the caps and the log).
public struct BridgeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let eventLoop: any EventLoop
    public let client: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        eventLoop = source.channel.eventLoop
        client = clientKey(source.channel.remoteAddress)
    }
}

/// What the page's stream sends as its status: every field of `status.json`, the detector's
/// thresholds on |a| (drawn on the live plot), and the last heartbeat message.
struct PageStatus: Encodable {
    struct Threshold: Encodable { var name: String; var g: Double }
    var status: DaemonStatus
    var thresholds: [Threshold]
    var heartbeat: String?

    enum Keys: String, CodingKey { case thresholds, heartbeat }

    func encode(to encoder: any Encoder) throws {
        try status.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(thresholds, forKey: .thresholds)
        try c.encodeIfPresent(heartbeat, forKey: .heartbeat)
    }
}
