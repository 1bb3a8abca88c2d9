import FallGuardCore
import Foundation

/// An ``AlertSink`` that writes each alert as one JSON line to standard output (or a closure),
/// for the demo and tests; the daemon uses the durable outbox.
public struct ConsoleAlertSink: AlertSink {
    private let write: @Sendable (String) -> Void

    public init(write: @escaping @Sendable (String) -> Void = { print($0); fflush(nil) }) {
        self.write = write
    }

    public func deliver(_ alert: Alert) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let body = String(decoding: try enc.encode(alert), as: UTF8.self)
        write(#"{"event":"alert","t_ns":\#(MonotonicClock.nanoseconds()),"alert":\#(body)}"#)
    }
}
