import FallGuardCore

/// What a person says an incident was. The same words for `fallguard label`, the archive and
/// the evaluation of the archive.
public enum IncidentLabel: String, Sendable, Equatable, Codable, CaseIterable {
    case fall
    case noFall = "no-fall"
    case unsure
}

/// One setting of an incident's label: who said it, when, and why.
public struct IncidentLabelEntry: Sendable, Equatable, Codable {
    public var label: IncidentLabel
    /// `wearer` (an abort: the wearer said it was no fall), a caregiver's name, or the person
    /// who ran `fallguard label` (their login name unless `--by` names someone).
    public var by: String
    /// Wall-clock time, ISO 8601 UTC.
    public var at: String
    public var note: String?

    public init(label: IncidentLabel, by: String, at: String, note: String? = nil) {
        (self.label, self.by, self.at, self.note) = (label, by, at, note)
    }
}

extension IncidentLabelEntry {
    /// Both histories as one, each entry once, in the order they were set (`at`, then as given).
    public static func merged(_ a: [IncidentLabelEntry], _ b: [IncidentLabelEntry]) -> [IncidentLabelEntry] {
        var out = a
        for e in b where !out.contains(e) { out.append(e) }
        return out.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }
}

/// The `incident.json` of one incident in the archive (`<state>/incidents/<ID>/`), beside its
/// `signal.csv` (a timed recording, `t_s` on the same clock as `eventTime`).
public struct IncidentRecord: Sendable, Equatable, Codable {
    /// One step of what happened, from the incident log (countdown, abort, expiry, deliveries,
    /// acknowledgement, "I'm OK").
    public struct Step: Sendable, Equatable, Codable {
        /// Seconds on the signal's clock.
        public var t: Double
        /// Wall-clock time, ISO 8601 UTC.
        public var time: String
        /// `fall-suspected`, `false-alarm`, `countdown-expired`, `delivered`, `acknowledged`, …
        public var event: String
        public var detail: String

        public init(t: Double, time: String, event: String, detail: String) {
            (self.t, self.time, self.event, self.detail) = (t, time, event, detail)
        }
    }

    /// The detector as it ran: its catalogue name, every setting, and the software.
    public struct DetectorInfo: Sendable, Equatable, Codable {
        public var name: String
        public var settings: [String: Double]
        public var software: String

        public init(name: String, settings: [String: Double], software: String) {
            (self.name, self.settings, self.software) = (name, settings, software)
        }
    }

    /// One message the outbox holds for the incident, as it stands.
    public struct Delivery: Sendable, Equatable, Codable {
        public var channel: String
        /// The contact's name, or nil for a channel without one (MQTT, webhook).
        public var to: String?
        /// `armed`, `pending`, `sent`, `failed`, `cancelled`.
        public var state: String
        public var attempts: Int
        /// The last error, redacted as the outbox stores it.
        public var error: String?

        public init(channel: String, to: String?, state: String, attempts: Int, error: String?) {
            (self.channel, self.to, self.state, self.attempts, self.error) = (channel, to, state, attempts, error)
        }
    }

    /// 1 for this layout.
    public var format: Int
    public var id: String
    /// `fall-suspected`, `help-requested` or `sensor-fault`.
    public var kind: String
    /// The event the signal is centred on (the impact of a suspected fall), on the signal's clock.
    public var eventTime: Double
    /// The same moment on the wall clock, ISO 8601 UTC.
    public var eventWallTime: String
    /// Whether the kernel called the wall clock synchronised (NTP) when the incident began:
    /// false marks ``eventWallTime`` and the timeline's times as possibly off (a Pi without a
    /// real-time clock boots with the time it last saved); nil when not known (an older record).
    public var clockSynchronized: Bool?
    /// Seconds of signal kept before and after the event.
    public var before: Double
    public var after: Double
    public var detector: DetectorInfo
    /// The detection behind a suspected fall: rule, phases, features (nil for other kinds).
    public var detection: FallSuspected?
    public var timeline: [Step]
    /// How the incident ended, as the bridge saw it: `open`, `false-alarm` (the wearer aborted),
    /// `alert-sent`, `acknowledged`, `resolved-by-wearer`, `timed-out`, `auto-cancelled`,
    /// `recovered-fall` (the wearer got up within the countdown: no alarm, the contacts told).
    public var outcome: String
    /// Every label set, oldest first; the last one is the incident's label.
    public var labels: [IncidentLabelEntry]
    /// What the outbox did with the incident's messages (nil: not known, e.g. an archive
    /// written without an outbox).
    public var deliveries: [Delivery]?

    public var label: IncidentLabelEntry? { labels.last }

    /// What a list shows after the time: a mark when the clock was not synchronised.
    public var clockMark: String { clockSynchronized == false ? " (clock not synchronised)" : "" }

    public init(id: String, kind: String, eventTime: Double, eventWallTime: String, before: Double, after: Double,
                detector: DetectorInfo, detection: FallSuspected?, timeline: [Step] = [], outcome: String = "open",
                labels: [IncidentLabelEntry] = []) {
        format = 1
        (self.id, self.kind, self.eventTime, self.eventWallTime) = (id, kind, eventTime, eventWallTime)
        (self.before, self.after, self.detector, self.detection) = (before, after, detector, detection)
        (self.timeline, self.outcome, self.labels) = (timeline, outcome, labels)
    }

    /// The record an incident's first event begins: a suspected fall (centred on its
    /// impact), a help request, or a sensor fault; nil for events that begin none.
    public static func begun(by e: IncidentEvent, wallTime: String, before: Double, after: Double,
                             detector: DetectorInfo) -> IncidentRecord? {
        let kind: String
        switch e.event {
        case .fallSuspected: kind = "fall-suspected"
        case .helpRequested: kind = "help-requested"
        case .sensorFault: kind = "sensor-fault"
        default: return nil
        }
        guard let id = e.incident else { return nil }
        var r = IncidentRecord(id: id, kind: kind, eventTime: e.fall?.impactTime ?? e.time, eventWallTime: wallTime,
                               before: before, after: after, detector: detector, detection: e.fall)
        r.apply(e, wallTime: wallTime)
        return r
    }

    /// Adds one event of this incident to the timeline, and what it says of the outcome: an
    /// abort is the wearer's word that it was no fall (a label by `wearer`).
    public mutating func apply(_ e: IncidentEvent, wallTime: String) {
        timeline.append(Step(t: e.time, time: wallTime, event: e.event.rawValue, detail: e.detail))
        switch e.event {
        case .falseAlarm:
            outcome = "false-alarm"
            labels.append(IncidentLabelEntry(label: .noFall, by: "wearer", at: wallTime, note: "the wearer aborted the countdown"))
        case .countdownExpired, .helpRequested, .deviceProblem, .alertResumed: outcome = "alert-sent"
        case .acknowledged: outcome = "acknowledged"
        case .resolvedByWearer: outcome = "resolved-by-wearer"
        case .activeTimedOut: outcome = "timed-out"
        case .autoCancelled: outcome = "auto-cancelled"
        case .recoveredFall: outcome = "recovered-fall"
        case .sensorRecovered: outcome = outcome == "open" ? "recovered" : outcome
        default: break
        }
    }

    enum CodingKeys: String, CodingKey {
        case format, id, kind, detector, detection, timeline, outcome, labels, deliveries, before, after
        case eventTime = "event_t_s", eventWallTime = "event_time", clockSynchronized = "clock_synchronized"
    }
}
