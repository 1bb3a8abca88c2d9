import FallGuardConfig
import FallGuardCore
import FallGuardMQTT
import FallGuardStation
import FallGuardWeb
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HTTPTypes
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `fallguard station`: the site's broker folded into a ``SiteModel`` (``MQTTSiteClient``) and
/// into the past incidents (``StationHistory``, a SQLite file in `station.state-directory`), and
/// the staff page over them (``StationPage``, ``StaffAccess``): `/` (401 with the login form
/// without a session), `/site.json`, `/incidents.json`, `/station.js`, `/login`, `/logout`, and `POST /ack`, which
/// publishes an acknowledgement proven with the bridge's secret in the signed-in member's name.
/// The security rules of the bridge's page: the exact loopback Host check, TLS beyond this
/// machine (the configuration's check), form tokens, the wrong-password throttle, capped
/// connections.
public final class StationServer: Sendable {
    public let section: StationSection
    /// The staff's logins and the displays; replaced by a reload (``reload(_:)``), sessions kept.
    public var access: StaffAccess { staff.mutex.withLock { $0 } }
    private let staff: Box<StaffAccess>
    /// Who lives where; replaced by a reload.
    private let roster: Box<[String: StationSection.Resident]>
    /// The shifts and who looks after which floors in each; replaced by a reload.
    private let shifts: Box<[StationSection.Shift]>
    private let model: SiteBox
    /// `/site.json`'s rows as last encoded: a poll encodes only the bridges that changed.
    private let rows = Box(StationPage.EncodedRows())
    let history: StationHistory
    private let mqtt: MQTTSiteClient
    /// The second connection, for the residents' bridges alone (``StationSection/Broker/residentsSettings``):
    /// what any number of other bridges send, read in order on ``mqtt``, does not hold back a
    /// resident's alarm (issue 40). Nil: one connection reads everything.
    private let residentsLink: MQTTSiteClient?
    /// The messages between the MQTT network thread and the site (bounded, fair per bridge).
    let inbox: StationInbox
    let escalation: StationEscalation
    private let logger: Logger
    private let loopbackOnly: Bool
    /// The log's lines of refused logins, PINs, keys and forms: 30 a minute from all clients
    /// together, as the bridge's page (issue 40: 4,102 lines in 2 s from a wrong-login flood).
    let webLines = LineBudget(perMinute: 30)

    public init(section: StationSection, logger: Logger) throws {
        self.section = section
        self.logger = logger
        staff = Box(Self.staffAccess(section))
        let roster = Box(section.residents)
        self.roster = roster
        shifts = Box(section.shifts)
        let model = SiteBox(SiteModel(prefix: section.broker.topicPrefix,
                                      roster: section.residents.mapValues { ($0.wearer, $0.location) }))
        self.model = model
        let history = StationHistory(directory: section.stateDirectory, days: section.historyDays, logger: logger)
        self.history = history
        escalation = StationEscalation(section: section, history: history, logger: logger)
        // Every page open before a restart goes on without anyone typing (issue 37).
        let restored = staff.mutex.withLock { $0 }.restore(history.keptSessions(), now: Date().timeIntervalSince1970)
        if restored > 0 { logger.notice("station: \(restored) sessions kept from before the restart") }
        let prefix = section.broker.topicPrefix
        loopbackOnly = section.onLoopback
        let clientID = section.broker.clientID ?? "fallguard-station-\(ProcessInfo.processInfo.processIdentifier)"
        let refusals = LineBudget(perMinute: 30)
        // The history's SQLite writes (an fsync each: seconds on a busy disk) on a worker of
        // their own, all that waits in one transaction: the site is never folded behind them
        // (issue 40: a resident's alarm waited 6-7.5 s behind a flood's commits).
        let historyWriter = StationHistoryWriter { messages, lost in
            let now = Date().timeIntervalSince1970
            let residents = roster.mutex.withLock { $0 }
            let capped = history.apply(messages, now: now, prefix: prefix, roster: { d in residents[d].map { ($0.wearer, $0.location, $0.floor) } })
            if capped > 0 { logger.warning("station: \(capped) alarms not recorded: their bridge opened \(PastIncidents.alarmsPerHour) within the hour", within: refusals, now: now) }
            if lost > 0 { logger.warning("station: \(lost) messages not recorded in the history: more than \(StationHistoryWriter.limit) were waiting for the disk", within: refusals, now: now) }
        }
        // Off libmosquitto's network thread: it only queues; the inbox's worker folds batches.
        let inbox = StationInbox(device: { Self.device(of: $0, prefix: prefix) ?? "" },
                                 urgent: { d in roster.mutex.withLock { $0[d] != nil } }) { batch, dropped in
            let now = Date().timeIntervalSince1970
            var refused: [SiteModel.Refusal] = []
            var taken: [StationInbox.Message] = []
            model.mutex.withLock { site in
                for m in batch {
                    if let r = site.apply(topic: m.topic, payload: m.payload, now: m.at) { refused.append(r) } else { taken.append(m) }
                }
            }
            // The history takes only what the site took (not the bridges past its cap).
            historyWriter.post(taken)
            var lines = refused.map { "station: refused from \($0)" }
            if dropped > 0 { lines.append("station: \(dropped) messages dropped: a bridge sent more than \(Int(StationInbox.perSecond)) a second (after \(Int(StationInbox.burst))), or more than \(StationInbox.perDevice) were waiting from it") }
            for line in lines { logger.warning(line, within: refusals, now: now) }
        }
        self.inbox = inbox
        // With the residents' own connection, each message is taken from one: a resident's from
        // that one, the rest from the site's (a reload moves a bridge from one to the other).
        let split = section.broker.residentsSettings != nil
        let isResident: @Sendable (String) -> Bool = { topic in
            Self.device(of: topic, prefix: prefix).map { d in roster.mutex.withLock { $0[d] != nil } } ?? false
        }
        do {
            mqtt = try MQTTSiteClient(settings: section.broker.settings, clientID: clientID, logger: logger) { topic, payload, retained in
                if split, isResident(topic) { return }
                inbox.post(.init(topic: topic, payload: payload, retained: retained, at: Date().timeIntervalSince1970))
            }
            residentsLink = try section.broker.residentsSettings.map { settings in
                try MQTTSiteClient(settings: settings, clientID: clientID + "-residents", logger: logger,
                                   topics: { Self.residentTopics(roster.mutex.withLock { Array($0.keys) }, prefix: prefix) },
                                   announces: false) { topic, payload, retained in
                    guard isResident(topic) else { return }
                    inbox.post(.init(topic: topic, payload: payload, retained: retained, at: Date().timeIntervalSince1970))
                }
            }
        } catch {
            throw DaemonStartError(description: "station: \(error)", status: 69)
        }
    }

    public var snapshot: SiteModel { model.mutex.withLock { $0 } }

    static func staffAccess(_ section: StationSection, throttle: PasswordThrottle = PasswordThrottle()) -> StaffAccess {
        StaffAccess(staff: section.staff.map { ($0.user, $0.name, $0.password) }, sessionHours: section.sessionHours,
                    pins: Dictionary(section.staff.compactMap { m in m.pin.map { (m.user, $0) } }, uniquingKeysWith: { a, _ in a }),
                    displayKey: section.displayKey, throttle: throttle)
    }

    /// Takes the staff (logins, PINs, the display key) and the residents of a new file at once;
    /// every session goes on (a member no longer listed loses theirs). Returns the other keys
    /// that changed: they take effect after a restart.
    @discardableResult
    public func reload(_ new: StationSection) -> [String] {
        staff.mutex.withLock { current in
            let next = Self.staffAccess(new, throttle: current.throttle)
            next.restore(current.savedSessions(now: WebSite.now()), now: WebSite.now())
            current = next
        }
        keepSessions()
        let added = roster.mutex.withLock { old in
            defer { old = new.residents }
            return new.residents.keys.filter { old[$0] == nil }
        }
        residentsLink?.subscribe(Self.residentTopics(added, prefix: section.broker.topicPrefix))
        shifts.mutex.withLock { $0 = new.shifts }
        model.mutex.withLock { $0.roster = new.residents.mapValues { ($0.wearer, $0.location) } }
        var old = section, applied = new
        (old.staff, old.residents, old.displayKey, old.sessionHours, old.shifts) = ([], [:], nil, 0, [])
        (applied.staff, applied.residents, applied.displayKey, applied.sessionHours, applied.shifts) = ([], [:], nil, 0, [])
        return old == applied ? [] : ["the rest of station:"]
    }

    /// SIGHUP: reads `path` again and takes what ``reload(_:)`` can; a file with errors changes nothing.
    func reload(path: String) {
        let (c, diagnostics) = StationConfiguration.load(path: path)
        guard !diagnostics.contains(where: \.isError) else {
            logger.error("SIGHUP: \(path) has errors; still running with the staff and residents loaded before")
            return
        }
        let later = reload(c.station)
        logger.notice("SIGHUP: reloaded \(path): \(c.station.staff.count) members of staff, \(c.station.residents.count) residents\(later.isEmpty ? "" : "; other changes take effect after a restart")")
    }

    /// The shift at `now` (local time), by the shifts in force.
    func shift(at now: Double) -> StationSection.Shift? {
        StationSection.shift(at: SystemLocalTime.time(secondsSince1970: now), in: shifts.mutex.withLock { $0 })
    }

    /// The floors as the page filters by them: each bridge's, and those of `user` in the shift now.
    func floors(for user: String?, now: Double) -> StationPage.Floors {
        let residents = roster.mutex.withLock { $0 }
        let current = shift(at: now)
        return StationPage.Floors(of: residents.compactMapValues(\.floor), shift: current?.name,
                                  mine: user.flatMap { current?.floors[$0] } ?? [])
    }

    /// The station's own link to the broker, as the page shows it: with the residents' own
    /// connection, connected when both are (since the earlier: a bridge seen after it came
    /// over the one that was up, so it is current), else since the one down went down; the
    /// first problem.
    public var link: SiteModel.Link {
        var c = mqtt.connection
        if let r = residentsLink?.connection {
            c.problem = c.problem ?? r.problem.map { "the residents' connection: " + $0 }
            switch (c.isConnected, r.isConnected) {
            case (true, true): c.since = min(c.since, r.since)
            case (true, false): c.since = r.since
            case (false, true): break
            case (false, false): c.since = max(c.since, r.since)
            }
            c.isConnected = c.isConnected && r.isConnected
        }
        return SiteModel.Link(connected: c.isConnected, since: c.since.timeIntervalSince1970, problem: c.problem,
                              broker: "\(mqtt.settings.host):\(mqtt.settings.effectivePort)")
    }

    /// What the residents' connection subscribes to: each resident's `<prefix>/<device>/#`.
    static func residentTopics(_ devices: [String], prefix: String) -> [String] {
        devices.filter { MQTTTopics.levelProblem($0) == nil }.sorted().map { "\(prefix)/\($0)/#" }
    }

    /// The device level of `<prefix>/<device>/<topic>`.
    static func device(of topic: String, prefix: String) -> String? {
        guard topic.hasPrefix(prefix + "/") else { return nil }
        return topic.dropFirst(prefix.count + 1).split(separator: "/").first.map(String.init)
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok, close: Bool = false) -> Response {
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
        for (name, value) in StationPage.securityHeaders { headers[HTTPField.Name(name)!] = value }
        if close { headers[.connection] = "close" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func session(_ request: Request) -> String? { WebAccess.session(inCookieHeader: request.headers[.cookie]) }

    /// The member signed in or the display, or the answer: 421 for a foreign Host on a loopback
    /// station, 401 with the login form without a valid session.
    func viewer(_ request: Request) -> Result<StaffAccess.Viewer, RefusalResponse> {
        guard access.acceptsHost(request.head.authority, loopbackOnly: loopbackOnly) else {
            return .failure(.init(WebSite.refused(.misdirectedRequest, "this page answers only to a loopback address")))
        }
        guard let v = access.viewer(session: session(request), now: WebSite.now()) else {
            return .failure(.init(Self.html(StationPage.login(message: nil), status: .unauthorized, close: true)))
        }
        return .success(v)
    }

    /// Who takes a step: the member signed in, or on a display the member whose PIN it is
    /// (wrong PINs counted per display session).
    func who(_ v: StaffAccess.Viewer, pin: String?, session: String, client: String) -> Result<StaffAccess.Member, RefusalResponse> {
        switch v {
        case let .member(m): return .success(m)
        case .display:
            switch access.member(pin: pin ?? "", session: session, now: WebSite.now()) {
            case let (.right, found?): return .success(found)
            case let (.throttled(seconds, _), _):
                return .failure(.init(WebSite.refused(.tooManyRequests, "too many wrong PINs: try again in \(seconds) s")))
            default:
                logger.warning("station: a wrong PIN on a display (from \(client))", within: webLines, now: WebSite.now())
                return .failure(.init(WebSite.refused(.forbidden, "wrong PIN")))
            }
        }
    }

    /// A form that acts in a member's name (`/ack`, `/step`): a session, the session's form
    /// token, and who (the member signed in, or by PIN on a display); its fields and the member.
    func staffForm(_ request: Request, client: String) async -> Result<([String: String], StaffAccess.Member), RefusalResponse> {
        var request = request
        let v: StaffAccess.Viewer
        switch viewer(request) {
        case let .failure(r): return .failure(r)
        case let .success(found): v = found
        }
        let fields = await WebSite.form(&request)
        guard access.acceptsForm(token: fields["csrf"], session: session(request), now: WebSite.now()) else {
            logger.warning("station: a form without the page's form token was refused (from \(client))", within: webLines, now: WebSite.now())
            return .failure(.init(WebSite.refused(.forbidden, "missing or wrong form token")))
        }
        return who(v, pin: fields["pin"], session: session(request) ?? "", client: client).map { (fields, $0) }
    }

    /// Keeps the sessions in the state directory after each sign-in and sign-out.
    func keepSessions() { history.keep(sessions: access.savedSessions(now: WebSite.now())) }

    /// A display's session from its key (`GET /display?key=…` as a kiosk starts, or the form).
    func openDisplay(key: String, client: String) -> Response {
        switch access.checkDisplay(key: key, client: client, now: WebSite.now()) {
        case .right:
            guard let id = access.startDisplaySession(now: WebSite.now()) else { break }
            keepSessions()
            logger.notice("station: a display opened from \(client)")
            var r = Response.redirect(to: "/", type: .normal)
            r.headers[.setCookie] = access.cookie(session: id, secure: section.tls != nil, display: true)
            return r
        case let .throttled(seconds, _):
            return Self.html(StationPage.login(message: "Too many wrong keys: try again in \(seconds) s."), status: .tooManyRequests, close: true)
        case .wrong:
            break
        }
        logger.warning("station: a wrong display key from \(client)", within: webLines, now: WebSite.now())
        return Self.html(StationPage.login(message: access.hasDisplays ? "Wrong display key." : "This station has no display mode (display-key)."),
                         status: .unauthorized, close: true)
    }

    public struct RefusalResponse: Error { let response: Response; init(_ r: Response) { response = r } }

    /// The site, shared by the MQTT thread that folds messages in and the page that reads it.
    final class SiteBox: Sendable {
        let mutex: Mutex<SiteModel>
        init(_ model: SiteModel) { mutex = Mutex(model) }
    }

    /// A value shared by the MQTT thread, the routes and a reload.
    final class Box<Value: Sendable>: Sendable {
        let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
    }

    func addRoutes(to router: Router<BridgeRequestContext>) {
        router.get("/") { [self] request, _ -> Response in
            switch viewer(request) {
            case let .failure(r): return r.response
            case let .success(v):
                let token = access.formToken(session: session(request), now: WebSite.now()) ?? ""
                if case let .member(m) = v { return Self.html(StationPage.main(member: m.name, formToken: token)) }
                return Self.html(StationPage.main(member: nil, formToken: token))
            }
        }
        router.get("display") { [self] request, context -> Response in
            guard access.acceptsHost(request.head.authority, loopbackOnly: loopbackOnly) else {
                return WebSite.refused(.misdirectedRequest, "this page answers only to a loopback address")
            }
            return openDisplay(key: request.uri.queryParameters["key"].map(String.init) ?? "", client: context.client)
        }
        router.get("station.js") { [self] request, _ -> Response in
            if case let .failure(r) = viewer(request) { return r.response }
            return Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: StationPage.script)))
        }
        router.get("site.json") { [self] request, _ -> Response in
            switch viewer(request) {
            case let .failure(r): return r.response
            case let .success(v):
                var me: StaffAccess.Member?
                if case let .member(m) = v { me = m }
                let now = WebSite.now()
                let (site, link, calls, floors) = (snapshot, link, history.current(now: now), floors(for: me?.user, now: now))
                let json = rows.mutex.withLock { rows in
                    StationPage.json(site, me: me?.name, link: link, now: now, calls: calls,
                                     escalation: (section.escalation.acceptWithin, section.escalation.presenceWithin),
                                     floors: floors, rows: &rows)
                }
                return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                                body: .init(byteBuffer: ByteBuffer(string: json)))
            }
        }
        router.get("incidents.json") { [self] request, _ -> Response in
            if case let .failure(r) = viewer(request) { return r.response }
            let now = WebSite.now()
            let json = StationPage.incidentsJSON(history.newestFirst(now: now), days: history.days, now: now, problem: history.problem)
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        router.get("login") { _, _ -> Response in Self.html(StationPage.login(message: nil)) }
        router.post("login") { [self] request, context -> Response in
            var request = request
            guard access.acceptsHost(request.head.authority, loopbackOnly: loopbackOnly) else {
                return WebSite.refused(.misdirectedRequest, "this page answers only to a loopback address")
            }
            let fields = await WebSite.form(&request)
            let (result, m) = access.check(user: fields["user"] ?? "", password: fields["password"] ?? "", client: context.client, now: WebSite.now())
            switch result {
            case .right:
                guard let m else { return Self.html(StationPage.login(message: "Wrong user or password."), status: .unauthorized, close: true) }
                logger.notice("station: \(m.user) signed in from \(context.client)")
                var r = Response.redirect(to: "/", type: .normal)
                r.headers[.setCookie] = access.cookie(session: access.startSession(for: m, now: WebSite.now()), secure: section.tls != nil)
                keepSessions()
                return r
            case .wrong:
                logger.warning("station: a wrong user or password from \(context.client)", within: webLines, now: WebSite.now())
                return Self.html(StationPage.login(message: "Wrong user or password."), status: .unauthorized, close: true)
            case let .throttled(seconds, _):
                return Self.html(StationPage.login(message: "Too many wrong passwords: try again in \(seconds) s."), status: .tooManyRequests, close: true)
            }
        }
        router.post("logout") { [self] request, _ -> Response in
            await WebSite.logout(request, accepts: { access.acceptsForm(token: $0, session: $1, now: WebSite.now()) },
                                 end: { access.logout(session: $0); keepSessions() })
        }
        // A step of an accepted call: presence ("I'm here"), then reset, named as /ack is.
        router.post("step") { [self] request, context -> Response in
            let (fields, m): ([String: String], StaffAccess.Member)
            switch await staffForm(request, client: context.client) {
            case let .failure(r): return r.response
            case let .success(found): (fields, m) = found
            }
            guard let step = fields["step"].flatMap(PastIncidents.Step.init(rawValue:)), let key = fields["key"], key.count <= 200 else {
                return WebSite.refused(.badRequest, "step (presence or reset) and key required")
            }
            switch history.take(step, key: key, by: m.name, now: WebSite.now()) {
            case let .failure(refused): return WebSite.refused(.conflict, refused.why)
            case let .success(r):
                logger.notice("station: \(m.user) took \(step.rawValue) on \(r.device) \(r.incident ?? r.key)")
                await tellBridge(step, of: r, by: m)
                return Response(status: .noContent)
            }
        }
        router.get("incidents.csv") { [self] request, _ -> Response in
            if case let .failure(r) = viewer(request) { return r.response }
            let now = WebSite.now()
            return Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8", .cacheControl: "no-store",
                                                   .contentDisposition: "attachment; filename=\"fallguard-incidents.csv\""],
                            body: .init(byteBuffer: ByteBuffer(string: StationPage.incidentsCSV(history.newestFirst(now: now),
                                                                                               shift: { [self] in shift(at: $0)?.name }))))
        }
        router.post("ack") { [self] request, context -> Response in
            let (fields, m): ([String: String], StaffAccess.Member)
            switch await staffForm(request, client: context.client) {
            case let .failure(r): return r.response
            case let .success(found): (fields, m) = found
            }
            guard let device = fields["device"], let incident = fields["incident"],
                  MQTTTopics.levelProblem(device) == nil, !incident.isEmpty, incident.count <= 64,
                  let bridge = snapshot.bridges[device] else { return WebSite.refused(.badRequest, "no such bridge or incident") }
            guard bridge.isOpenAlert(incident) else {
                logger.warning("station: \(m.user) asked to acknowledge \(incident) on \(device), which is not its open alert: not signed")
                return WebSite.refused(.conflict, "\(incident) is not \(device)'s open alert: nothing to acknowledge")
            }
            guard let secret = section.secret(for: device) else { return WebSite.refused(.conflict, "no acknowledge-secret for \(device)") }
            do {
                try await mqtt.acknowledge(device: device, incident: incident, by: m.name, secret: secret)
            } catch {
                logger.error("station: the acknowledgement of \(incident) on \(device) by \(m.user) did not reach the broker: \(error)")
                return WebSite.refused(.serviceUnavailable, "the broker did not take the acknowledgement: \(error)")
            }
            logger.notice("station: \(m.user) acknowledged \(incident) on \(device)")
            return Response(status: .noContent)
        }
    }

    /// Sends a step the station recorded to its bridge on the signed acknowledgement path (the
    /// bridge's own key, the name and the step inside the signed text, the incident the bridge
    /// accepted), so that the bridge shows and archives it. The station's record stands whether
    /// or not it lands: its escalation follows the record, and the step silences nothing.
    private func tellBridge(_ step: PastIncidents.Step, of r: PastIncidents.Record, by m: StaffAccess.Member) async {
        guard let incident = r.incident, let secret = section.secret(for: r.device) else { return }
        do {
            try await mqtt.acknowledge(device: r.device, incident: incident, by: m.name, secret: secret, step: step)
        } catch {
            logger.warning("station: \(step.rawValue) of \(incident) on \(r.device) recorded, but not sent to the bridge: \(error)")
        }
    }

    /// glibc's `malloc_trim` (declared in <malloc.h>, which Swift's Glibc module leaves out); nil
    /// with another C library.
    private nonisolated(unsafe) static let mallocTrim: (@convention(c) (Int) -> Int32)? =
        dlsym(nil, "malloc_trim").map { unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self) }

    /// Every `seconds`, gives the C library's free memory back to the system (issue 37): glibc
    /// keeps what a burst freed (the retained messages of every bridge at a connection, a page's
    /// JSON) inside its per-thread arenas, ~4.6 MiB of the station's 62 MiB with 200 bridges,
    /// returned by one `malloc_trim(0)` (a few milliseconds).
    static func trimMemory(every seconds: Double = 10) async {
        guard let trim = mallocTrim else { return }
        while (try? await Task.sleep(for: .seconds(seconds))) != nil { _ = trim(0) }
    }

    /// The HTTP server and the MQTT connection, until `duration` seconds (nil: until SIGTERM/SIGINT).
    /// `configPath`: the file a SIGHUP reads again (``reload(path:)``).
    public func run(duration: Double? = nil, configPath: String? = nil, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        guard let address = section.address else { throw DaemonStartError(description: "station.listen: malformed", status: 78) }
        let router = Router(context: BridgeRequestContext.self)
        addRoutes(to: router)
        let clients = ClientConnections(perClient: ClientLimits.connectionsPerClient, total: ClientLimits.total(below: 256))
        let http1 = HTTPServerBuilder.http1(configuration: .init(
            additionalChannelHandlers: [ConnectionGuard(clients, deadline: ClientLimits.requestDeadline)],
            idleTimeout: TimeAmount(MetricsEndpoint.idleTimeout)))
        let tls = try section.tls.map { try MetricsEndpoint.tls(certificate: $0.certificate, key: $0.key) }
        let app = HTTPServer(router: router, server: try tls.map { try .tls(http1, tlsConfiguration: $0) } ?? http1,
                             configuration: .init(address: .hostname(address.host, port: address.port), serverName: "fallguard-station",
                                                  backlog: 64, availableConnectionsDelegate: MaximumAvailableConnections(256)),
                             onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? address.port) },
                             logger: logger)
        mqtt.start()
        residentsLink?.start()
        let escalating = Task { await escalation.run() }
        let trimming = Task { await Self.trimMemory() }
        defer { trimming.cancel() }
        let reloading = Task { [self] in
            guard let configPath else { return }
            for await _ in await UnixSignalsSequence(trapping: .sighup) { reload(path: configPath) }
        }
        defer { reloading.cancel() }
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)],
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            if let duration {
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    tasks.addTask {
                        try await Task.sleep(for: .seconds(duration))
                        await group.triggerGracefulShutdown()
                    }
                    try await tasks.next()
                    tasks.cancelAll()
                }
            } else {
                try await group.run()
            }
        } catch {
            // Cancelled (a test's stop) or failed: the MQTT connection and the escalations go too.
            escalating.cancel()
            await escalating.value
            await mqtt.stop()
            await residentsLink?.stop()
            throw error
        }
        escalating.cancel()
        await escalating.value
        await mqtt.stop()
        await residentsLink?.stop()
    }
}
