import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// What one client may hold of the bridge's HTTP server (the page and `/metrics`), so that
/// nobody without a session can keep the page from its owner (issue 28):
///
/// - a connection must bring a whole request (head and body) within ``requestDeadline`` of
///   opening or of its last answer, or it is closed (half-sent requests, a TLS handshake that
///   never ends);
/// - each client (``clientKey(_:)``) holds at most ``connectionsPerClient`` connections; a new
///   one beyond that closes the client's oldest connection that is still waiting for a whole
///   request, and is refused only while all of them are being answered;
/// - all clients together hold at most the server's total (below its accept limit): a new
///   connection beyond it closes the oldest waiting connection of the client that holds the
///   most, so many addresses each holding a few half-sent requests (issue 40: 40-80 addresses
///   × 8) cannot keep the owner's one connection from being accepted and answered;
/// - an answer that says `Connection: close` (every refusal: 401, 403, 421, 429, 503) ends its
///   connection;
/// - streams (`/live`, which need a session) are capped at ``streamsPerClient`` per client and
///   ``streams`` in all, well below the connection cap (``StreamSlots``).
public enum ClientLimits {
    public static let requestDeadline = Duration.seconds(5)
    public static let connectionsPerClient = 8
    public static let streamsPerClient = 4
    public static let streams = 8

    /// What all clients together may hold on a server that accepts at most `acceptLimit`: an
    /// eighth below it, so that a new connection is still accepted, and makes room.
    static func total(below acceptLimit: Int) -> Int { max(1, acceptLimit - max(1, acceptLimit / 8)) }
}

/// Who a peer is for the caps and the password throttle: its IP address (an IPv4-mapped IPv6
/// address as IPv4). Not the /64 of an IPv6 one: a home network's devices share theirs. Made
/// from the socket's address, so it is safe to log.
func clientKey(_ address: SocketAddress?) -> String {
    switch address {
    case .v4?:
        return address?.ipAddress ?? "?"
    case let .v6(a)?:
        let bytes = withUnsafeBytes(of: a.address.sin6_addr) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        return address?.ipAddress ?? "?"
    case .unixDomainSocket?:
        return "unix"
    case nil:
        return "?"
    }
}

/// The open connections of each client, oldest first, and whether each is waiting for a whole
/// request (idle, half-sent, or its body still coming) or being answered.
final class ClientConnections: Sendable {
    let perClient: Int
    /// All clients together (Int.max: no cap of its own).
    let total: Int
    private struct Held {
        let channel: any Channel
        let closer: NIOLoopBound<SocketCloser>
        var waiting = true
    }
    private let held = Mutex<[String: [Held]]>([:])

    init(perClient: Int = ClientLimits.connectionsPerClient, total: Int = .max) { (self.perClient, self.total) = (perClient, total) }

    /// Takes a new connection of `client` (its socket shut through `closer`): true when it may
    /// go on. At the client's cap, its oldest connection still waiting for its request is shut
    /// to make room; at the total, the oldest waiting one of the client that holds the most.
    func admit(_ channel: any Channel, closer: NIOLoopBound<SocketCloser>, client: String) -> Bool {
        let outcome: (admitted: Bool, evicted: NIOLoopBound<SocketCloser>?) = held.withLock { all in
            var list = all[client] ?? []
            var evicted: NIOLoopBound<SocketCloser>?
            if list.count >= perClient {
                guard let i = list.firstIndex(where: { $0.waiting }) else { return (false, nil) }
                evicted = list.remove(at: i).closer
            } else if all.values.reduce(0, { $0 + $1.count }) >= total {
                // The biggest holder with a connection waiting gives its oldest one to a client
                // that holds fewer; else the client gives its own oldest waiting one; else no room.
                let holders = all.filter { $0.value.contains(where: \.waiting) }
                if let other = holders.max(by: { $0.value.count < $1.value.count })?.key, other != client,
                   all[other]!.count > list.count, let i = all[other]!.firstIndex(where: { $0.waiting }) {
                    evicted = all[other]!.remove(at: i).closer
                    if all[other]!.isEmpty { all[other] = nil }
                } else if let i = list.firstIndex(where: { $0.waiting }) {
                    evicted = list.remove(at: i).closer
                } else {
                    return (false, nil)
                }
            }
            list.append(Held(channel: channel, closer: closer))
            all[client] = list
            return (true, evicted)
        }
        if let evicted = outcome.evicted {   // on its own loop, after this: closing calls back into `release`
            evicted.eventLoop.execute { evicted.value.closeNow() }
        }
        return outcome.admitted
    }

    /// Whether the connection is waiting for a request (may be closed for a newer one) or being answered.
    func setWaiting(_ channel: any Channel, client: String, _ waiting: Bool) {
        held.withLock { all in
            guard let i = all[client]?.firstIndex(where: { $0.channel === channel }) else { return }
            all[client]![i].waiting = waiting
        }
    }

    func release(_ channel: any Channel, client: String) {
        held.withLock { all in
            all[client]?.removeAll { $0.channel === channel }
            if all[client]?.isEmpty == true { all[client] = nil }
        }
    }
}

/// The first handler of a connection's pipeline (before TLS): a close from here shuts the
/// socket at once. TLS's own close sends close_notify and waits up to 5 s for the peer's, which
/// a peer that has gone (FIN sent) or does not care (an attacker) never sends, and the
/// connection would stay counted against everybody's cap meanwhile.
final class SocketCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Closes the socket, past every handler above this one.
    func closeNow() { context?.close(promise: nil) }
}

/// One per connection, after the HTTP decoder: admits it (``ClientConnections``), and shuts its
/// socket (``SocketCloser``) when no whole request came within the deadline, after an answer
/// with `Connection: close`, or when the peer has gone (its FIN).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let connections: ClientConnections
    let deadline: TimeAmount
    private var client: String?
    private var admitted = false
    private var deadlineTask: Scheduled<Void>?
    private var closeAfterAnswer = false
    /// A request's head came and its answer has not ended.
    private var answering = false
    /// The peer closed its side (FIN).
    private var peerClosed = false
    private let closer = SocketCloser()

    init(_ connections: ClientConnections, deadline: Duration = ClientLimits.requestDeadline) {
        self.connections = connections
        self.deadline = TimeAmount(deadline)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(closer, position: .first)
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        if admitted { context.fireChannelActive() }
    }

    /// Admits the connection (or closes it) and starts the deadline for its first request.
    private func start(_ context: ChannelHandlerContext) {
        guard client == nil else { return }
        let key = clientKey(context.channel.remoteAddress)
        client = key
        guard connections.admit(context.channel, closer: NIOLoopBound(closer, eventLoop: context.eventLoop), client: key) else {
            closer.closeNow()
            return
        }
        admitted = true
        armDeadline(context)
    }

    private func armDeadline(_ context: ChannelHandlerContext) {
        deadlineTask?.cancel()
        deadlineTask = context.eventLoop.assumeIsolated().scheduleTask(in: deadline) { [weak self] in
            self?.deadlineTask = nil
            self?.closer.closeNow()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let e = event as? ChannelEvent, e == .inputClosed {
            peerClosed = true
            if !answering { closer.closeNow() }   // else once the answer is out
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            answering = true
        case .body:
            break
        case .end where answering:   // a whole request, its answer not yet out: no deadline meanwhile
            deadlineTask?.cancel()
            deadlineTask = nil
            if admitted, let client { connections.setWaiting(context.channel, client: client, false) }
        case .end:   // the rest of a body the answer did not wait for: the next request's deadline runs on
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case let .head(response):
            if response.headerFields[.connection]?.lowercased() == "close" { closeAfterAnswer = true }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            answering = false
            if closeAfterAnswer || peerClosed {   // shut once the answer is in the socket
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.assumeIsolated().whenComplete { [closer] _ in closer.closeNow() }
                written.futureResult.cascade(to: promise)
                context.writeAndFlush(data, promise: written)
                return
            }
            context.write(data, promise: promise)
            if admitted, let client { connections.setWaiting(context.channel, client: client, true) }
            armDeadline(context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { finish(context) }

    private func finish(_ context: ChannelHandlerContext) {
        deadlineTask?.cancel()
        deadlineTask = nil
        if admitted, let client { connections.release(context.channel, client: client) }
        admitted = false
    }
}

/// The `/live` streams open now, per client and in all. A stream holds a ``Slot`` for as long
/// as its body runs; dropping the slot gives it back.
final class StreamSlots: Sendable {
    let perClient: Int
    let total: Int
    private let open = Mutex<[String: Int]>([:])

    init(perClient: Int = ClientLimits.streamsPerClient, total: Int = ClientLimits.streams) {
        (self.perClient, self.total) = (perClient, total)
    }

    final class Slot: Sendable {
        let slots: StreamSlots
        let client: String
        init(_ slots: StreamSlots, _ client: String) { (self.slots, self.client) = (slots, client) }
        deinit {
            slots.open.withLock { o in
                o[client, default: 1] -= 1
                if o[client] == 0 { o[client] = nil }
            }
        }
    }

    /// A slot for a new stream of `client`, nil when the client or the server is at its cap.
    func take(client: String) -> Slot? {
        let ok = open.withLock { o in
            guard o[client, default: 0] < perClient, o.values.reduce(0, +) < total else { return false }
            o[client, default: 0] += 1
            return true
        }
        return ok ? Slot(self, client) : nil
    }
}
