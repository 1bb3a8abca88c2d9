import AsyncHTTPClient
import FallGuardCore
import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP exchange for a channel, with the failure classification every HTTP channel shares.
struct HTTPDelivery {
    /// The answer of a request that reached the server.
    struct Answer {
        var status: HTTPResponseStatus
        var body: String
    }

    /// Sends `request`; throws ``DeliveryFailure/transient(_:)`` when the server was not reached
    /// or did not answer in time.
    static func send(_ request: HTTPClientRequest, client: HTTPClient, timeout: Double) async throws -> Answer {
        do {
            let response = try await client.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
            let body = try await response.body.collect(upTo: 64 * 1024)
            return Answer(status: response.status, body: String(buffer: body))
        } catch let failure as DeliveryFailure {
            throw failure
        } catch {
            throw DeliveryFailure.transient("\(request.url): \(error)")
        }
    }

    /// 2xx is delivered; 408, 429 and 5xx are transient; any other status is permanent.
    static func check(_ answer: Answer, url: String) throws {
        let code = Int(answer.status.code)
        if (200..<300).contains(code) { return }
        let why = "\(url) answered HTTP \(code)" + (answer.body.isEmpty ? "" : ": \(answer.body.prefix(300))")
        if code == 408 || code == 429 || code >= 500 { throw DeliveryFailure.transient(why) }
        throw DeliveryFailure.permanent(why)
    }

    /// `application/x-www-form-urlencoded` of `fields`, in order.
    static func formEncoded(_ fields: [(String, String)]) -> String {
        func enc(_ s: String) -> String { percentEncoded(s, keeping: isURLUnreserved) }
        return fields.map { "\(enc($0.0))=\(enc($0.1))" }.joined(separator: "&")
    }
}
