import FallGuardCore
import Foundation

/// An ``AlertSink`` that writes each alert as one JSON line to standard output (or a closure),
/// for the demo and tests; the daemon uses the durable outbox.
public struct ConsoleAlertSink: AlertSink {
    private let write: @Sendable (String) -> Void

    public init(write: @escaping @Sendable (String) -> Void = { print($0); fflush(nil) }) {
        self.write = write
    }

    /// One line: `{"alert":{…},"event":"alert","t_ns":…}`.
    private struct Line: Encodable {
        var event = "alert"
        var tNs = MonotonicClock.nanoseconds()
        var alert: Alert

        enum CodingKeys: String, CodingKey { case event, tNs = "t_ns", alert }
    }

    public func deliver(_ alert: Alert) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        write(String(decoding: try enc.encode(Line(alert: alert)), as: UTF8.self))
    }
}
