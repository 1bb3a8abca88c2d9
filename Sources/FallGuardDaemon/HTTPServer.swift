import FallGuardCore
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// The bridge's and the station's HTTP servers: a Hummingbird router behind Hummingbird's
/// HTTP/1 (or TLS) server, run as Hummingbird's `Application` runs one, with one difference:
/// the `Date` header is written by arithmetic at each response (``httpDate(secondsSince1970:)``).
///
/// Hummingbird's `Application` keeps a date cache that builds a Foundation `Calendar`, and
/// with it ICU's time-zone data: more than a megabyte of resident memory in a daemon whose
/// bar is 30 MB, and a timer that woke the bridge every second to format a date nobody asked
/// for (README, "Memory").
struct HTTPServer<Responder: HTTPResponder>: ApplicationProtocol
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let responder: Responder
    let server: HTTPServerBuilder
    let configuration: ApplicationConfiguration
    let logger: Logger
    let onRunning: @Sendable (any Channel) async -> Void

    init<Builder: HTTPResponderBuilder>(router: Builder, server: HTTPServerBuilder, configuration: ApplicationConfiguration,
                                        onServerRunning: @escaping @Sendable (any Channel) async -> Void, logger: Logger)
    where Builder.Responder == Responder {
        self.responder = router.buildResponder()
        self.server = server
        self.configuration = configuration
        self.onRunning = onServerRunning
        self.logger = logger
    }

    func onServerRunning(_ channel: any Channel) async { await onRunning(channel) }

    /// The server until graceful shutdown (as `ApplicationProtocol.run()`, without its date cache).
    func run() async throws {
        let responder = self.responder
        let logger = self.logger
        let serverName = configuration.serverName
        let server = try self.server.buildServer(
            configuration: ServerConfiguration(address: configuration.address, serverName: serverName,
                                               backlog: configuration.backlog, reuseAddress: configuration.reuseAddress,
                                               availableConnectionsDelegate: configuration.availableConnectionsDelegate),
            eventLoopGroup: eventLoopGroup, logger: logger
        ) { (request, responseWriter: consuming ResponseWriter, channel) in
            var response: Response
            do {
                response = try await responder.respond(to: request, context: Responder.Context(source: .init(channel: channel, logger: logger)))
            } catch let error as HTTPParserError {
                throw error
            } catch {
                logger.debug("HTTP: unrecognised error", metadata: ["error.type": "\(error)"])
                response = Response(status: .internalServerError, body: .init())
            }
            response.headers[.date] = httpDate(secondsSince1970: time(nil))
            if let serverName { response.headers[.server] = serverName }
            do {
                try await responseWriter.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // A parser error thrown from here would make the channel write a second response:
                // any other error closes the connection.
                throw ResponseNotWritten()
            }
        } onServerRunning: {
            await self.onServerRunning($0)
        }
        try await server.run()
    }

    private struct ResponseNotWritten: Error {}
}
