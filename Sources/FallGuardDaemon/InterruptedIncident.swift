import FallGuardCore
import FallGuardHardware
import Foundation

/// A fall the last process lost between the incident log and the outbox: the alarm writes the
/// `fall-suspected` line (synced) before it arms the countdown's alert in the outbox, and a
/// crash, a watchdog kill or a power cut in between leaves a countdown nobody aborted and
/// nothing to send it. At start, the last incident in the log is such a fall when it began a
/// countdown within ``recent`` seconds, has no line that ends it, and the outbox has no alert
/// for it: its fall alert goes out then.
struct InterruptedIncident: Equatable {
    var incident: String
    var fall: FallSuspected?

    /// Older ones are history (an outbox removed by hand must not send last month's fall again).
    static let recent = 3600.0

    /// The lines that end a countdown or an incident.
    static let endings: Set<String> = [
        IncidentEvent.Kind.falseAlarm, .autoCancelled, .countdownExpired, .recoveredFall, .helpRequested, .resolvedByWearer,
        .acknowledged, .activeTimedOut,
    ].reduce(into: []) { $0.insert($1.rawValue) }

    /// The interrupted fall in the log's `lines`, if its last incident is one, as of `now`
    /// (Unix seconds).
    static func find(inLog lines: [Substring], now: Double) -> InterruptedIncident? {
        let events = lines.compactMap { try? JSONDecoder().decode(LoggedEvent.self, from: Data($0.utf8)) }
        guard let start = events.lastIndex(where: { $0.event == IncidentEvent.Kind.fallSuspected.rawValue }),
              let incident = events[start].incident,
              events[start].wallTime >= iso8601(secondsSince1970: now - recent),
              !events[start...].contains(where: { $0.incident == incident && endings.contains($0.event) })
        else { return nil }
        return InterruptedIncident(incident: incident, fall: events[start].fall)
    }

    /// One line of `incidents.jsonl`, as much as this needs (other lines, such as a failed
    /// dispatch, decode too).
    private struct LoggedEvent: Decodable {
        var incident: String?
        var event: String
        var fall: FallSuspected?
        var wallTime: String

        enum CodingKeys: String, CodingKey { case incident, event, fall, wallTime = "wall-time" }
    }
}
