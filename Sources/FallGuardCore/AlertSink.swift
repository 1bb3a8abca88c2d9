/// Where the alarm hands every dispatched ``Alert``: the durable outbox in the daemon, a
/// console or log sink in the demo and tests.
///
/// Called on the alarm's own thread, in dispatch order; return quickly (store, do not send).
/// A throw is logged loudly and recorded in the incident log; the alarm keeps sounding.
public protocol AlertSink: Sendable {
    func deliver(_ alert: Alert) throws
}
