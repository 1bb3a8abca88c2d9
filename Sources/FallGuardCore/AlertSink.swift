/// Where the alarm hands every dispatched ``Alert``: the durable outbox in the daemon, a
/// console or log sink in the demo and tests.
///
/// Called on the alarm's own thread, in dispatch order; return quickly (store, do not send).
/// A throw is logged loudly and recorded in the incident log; the alarm keeps sounding.
///
/// A countdown is announced before it ends: ``arm(_:fallback:)`` when it begins, with the
/// fall alert its expiry will dispatch; then either ``deliver(_:)`` of an alert for that
/// incident (the fall alert at expiry, or a help request that replaces it) or
/// ``disarm(incident:reason:)`` (aborted). A durable sink commits the armed alert at once,
/// held, and sends it by itself `fallback` seconds later if neither follows: a crash, a
/// watchdog restart or a power cut during the countdown does not lose the fall, and at expiry
/// the alert is already on disk.
public protocol AlertSink: Sendable {
    func deliver(_ alert: Alert) throws
    /// A countdown began; `alert` is what its expiry will dispatch. Throws if it could not be
    /// stored (the alarm goes on; ``deliver(_:)`` at expiry stores it then).
    func arm(_ alert: Alert, fallback seconds: Double) throws
    /// The countdown of `incident` ended without an alert (aborted, or cancelled as a false alarm).
    func disarm(incident: String, reason: String) throws
}

extension AlertSink {
    /// Sinks that are not durable have nothing to hold: the alert is handed over at expiry.
    public func arm(_ alert: Alert, fallback seconds: Double) throws {}
    public func disarm(incident: String, reason: String) throws {}
}
