import FallGuardCore
import Foundation

/// One line of a labels sidecar (`<name>.labels.csv` beside `<name>.csv` or `<name>.csv.gz`):
/// a labelled fall at its impact, or the start or end of a span the device was off the body.
public struct EventLabel: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case fall
        case notWornStart = "not-worn-start"
        case notWornEnd = "not-worn-end"
    }

    public var time: Double
    public var kind: Kind
    public var note: String?

    public init(time: Double, kind: Kind, note: String? = nil) { (self.time, self.kind, self.note) = (time, kind, note) }
}

/// A file beside a recording that says more about it: `x.csv` and `x.csv.gz` → `x<suffix>`.
func sidecarPath(of recording: String, suffix: String) -> String {
    var stem = recording
    for ext in [".gz", ".csv"] where stem.hasSuffix(ext) { stem.removeLast(ext.count) }
    return stem + suffix
}

public enum LabelsFile {
    public static let suffix = ".labels.csv"
    public static let header = "t_s,label"

    /// The sidecar of a recording: `x.csv` and `x.csv.gz` → `x.labels.csv`.
    public static func sidecar(of recording: String) -> String { sidecarPath(of: recording, suffix: suffix) }

    /// Reads a sidecar: header `t_s,label[,note]`, then one label a line (times in the
    /// recording's `t_s`, in order). Errors name the file and line, as recordings' do.
    public static func read(path: String) throws(RecordingFileError) -> [EventLabel] {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw RecordingFileError(path: path, reason: "cannot read: \(error.localizedDescription)")
        }
        var labels: [EventLabel] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines.first.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        guard first == header || first == header + ",note" else {
            throw RecordingFileError(path: path, line: 1, reason: "header is '\(first.prefix(40))', expected '\(header)' or '\(header),note'")
        }
        for (i, raw) in lines.enumerated().dropFirst() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let fields = line.split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= 2, let t = Double(fields[0]), t.isFinite, abs(t) <= Recording.timeLimit else {
                throw RecordingFileError(path: path, line: i + 1, reason: "expected t_s,label[,note] with t_s a time in seconds, found '\(line.prefix(60))'")
            }
            guard let kind = EventLabel.Kind(rawValue: fields[1]) else {
                throw RecordingFileError(path: path, line: i + 1,
                                         reason: "label '\(fields[1].prefix(30))' is not one of \(EventLabel.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if let last = labels.last, t < last.time {
                throw RecordingFileError(path: path, line: i + 1, reason: "time \(t) s comes before the previous label's \(last.time) s")
            }
            labels.append(EventLabel(time: t, kind: kind, note: fields.count > 2 && !fields[2].isEmpty ? fields[2] : nil))
        }
        return labels
    }
}

/// What the wearer was doing from `start` to `end` (seconds in the recording's `t_s`), from a
/// `<name>.activities.csv` sidecar: `walking`, `sitting`, `stand-to-sit`, … (any word).
public struct ActivitySpan: Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var activity: String

    public init(start: Double, end: Double, activity: String) { (self.start, self.end, self.activity) = (start, end, activity) }

    /// The word for a moment no span covers.
    public static let unlabelled = "unlabelled"
}

/// The activities sidecar of a continuous recording (`start_s,end_s,activity`, as in
/// `hapt-dev-50hz`; a field tester's own recordings can carry one): `evaluate` and `report`
/// then give false alarms per activity and per hour of each activity.
public enum ActivitiesFile {
    public static let suffix = ".activities.csv"
    public static let header = "start_s,end_s,activity"

    /// `x.csv` and `x.csv.gz` → `x.activities.csv`.
    public static func sidecar(of recording: String) -> String { sidecarPath(of: recording, suffix: suffix) }

    /// The spans of the sidecar beside `recording`, or none when it has none. Errors name the
    /// file and line.
    public static func read(besides recording: String) throws(RecordingFileError) -> [ActivitySpan] {
        let path = sidecar(of: recording)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        return try read(path: path)
    }

    /// Reads a sidecar: the header, then `start_s,end_s,activity` a line, spans in order and
    /// not overlapping.
    public static func read(path: String) throws(RecordingFileError) -> [ActivitySpan] {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw RecordingFileError(path: path, reason: "cannot read: \(error.localizedDescription)")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines.first.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        guard first == header else {
            throw RecordingFileError(path: path, line: 1, reason: "header is '\(first.prefix(40))', expected '\(header)'")
        }
        var spans: [ActivitySpan] = []
        for (i, raw) in lines.enumerated().dropFirst() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard f.count == 3, let start = Double(f[0]), let end = Double(f[1]), start.isFinite, end.isFinite,
                  abs(start) <= Recording.timeLimit, abs(end) <= Recording.timeLimit, start < end, !f[2].isEmpty else {
                throw RecordingFileError(path: path, line: i + 1,
                                         reason: "expected start_s,end_s,activity with start_s < end_s, found '\(line.prefix(60))'")
            }
            if let last = spans.last, start < last.end - 1e-9 {
                throw RecordingFileError(path: path, line: i + 1, reason: "span \(start)-\(end) s begins before the previous one ends (\(last.end) s)")
            }
            spans.append(ActivitySpan(start: start, end: end, activity: f[2]))
        }
        return spans
    }

    /// The activity at `time`: the span that holds it, else ``ActivitySpan/unlabelled``.
    /// `spans` in order; a binary search.
    public static func activity(at time: Double, in spans: [ActivitySpan]) -> String {
        span(at: time, in: spans)?.activity ?? ActivitySpan.unlabelled
    }

    /// The span that holds `time`, if any.
    public static func span(at time: Double, in spans: [ActivitySpan]) -> ActivitySpan? {
        var lo = 0, hi = spans.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if spans[mid].end <= time { lo = mid + 1 } else { hi = mid }
        }
        return lo < spans.count && spans[lo].start <= time ? spans[lo] : nil
    }
}

/// What the wearer-activity detectors said during one activity, over the 40 Hz stream the fall
/// detector saw: how much of it `WalkingDetector` called walking (all of it, and from
/// ``settle`` seconds into each span: the time a walk may take to be recognised) and how much
/// `NotWornDetector` (at its shortest time, one minute) called not worn.
public struct ActivityTally: Sendable, Equatable {
    /// Seconds into a span after which walking must have been recognised.
    public static let settle = 5.0

    public var seconds = 0.0
    public var walkingSeconds = 0.0
    public var settledSeconds = 0.0
    public var settledWalkingSeconds = 0.0
    public var notWornSeconds = 0.0

    public init() {}

    public static func + (a: ActivityTally, b: ActivityTally) -> ActivityTally {
        var r = a
        r.seconds += b.seconds
        r.walkingSeconds += b.walkingSeconds
        r.settledSeconds += b.settledSeconds
        r.settledWalkingSeconds += b.settledWalkingSeconds
        r.notWornSeconds += b.notWornSeconds
        return r
    }
}

/// What a detector did on one continuous recording, scored by events.
public struct EventOutcome: Sendable {
    public var path: String
    public var labels: [EventLabel]
    /// Every detection outside the not-worn spans.
    public var detections: [FallSuspected]
    /// Each labelled fall with the detection that found it (its impact within the tolerance).
    public var falls: [(label: EventLabel, detection: FallSuspected?)]
    /// Detections that match no labelled fall and would have alarmed.
    public var falseAlarms: [FallSuspected]
    /// Detections that match no labelled fall, whose wearer was up again within the countdown:
    /// told as a recovered fall (information), no alarm.
    public var recoveredReports: [FallSuspected] = []
    /// Seconds the device was worn: the recording's samples, less the not-worn spans and gaps.
    public var wornSeconds: Double
    /// What the wearer was doing (the activities sidecar), empty without one.
    public var activities: [ActivitySpan] = []
    /// Seconds worn per activity (empty without an activities sidecar).
    public var wornSecondsByActivity: [String: Double] = [:]
    /// Walking and not-worn per activity (empty without an activities sidecar).
    public var tallies: [String: ActivityTally] = [:]

    /// The activity at each false alarm's impact (empty without an activities sidecar).
    public var falseAlarmActivities: [String] {
        activities.isEmpty ? [] : falseAlarms.map { ActivitiesFile.activity(at: $0.impactTime, in: activities) }
    }
}

/// Event-level figures over continuous recordings.
public struct EventScores: Sendable, Equatable {
    public var recordings = 0
    /// The labelled falls, those detected and the delays (from the labelled impact) to their decisions.
    public var fallTally = FallTally()
    public var falseAlarms = 0
    /// Recovered-fall reports outside the labelled falls (no alarm).
    public var recoveredReports = 0
    public var wornHours = 0.0
    /// Per activity (recordings with an activities sidecar only): hours worn and false alarms.
    public var byActivity: [String: ActivityScore] = [:]

    public struct ActivityScore: Sendable, Equatable {
        public var hours = 0.0
        public var falseAlarms = 0
        public var tally = ActivityTally()
    }

    public init(_ outcomes: [EventOutcome]) {
        for o in outcomes {
            recordings += 1
            fallTally.falls += o.falls.count
            for f in o.falls { if let d = f.detection { fallTally.detected += 1; fallTally.delays.append(d.decisionTime - f.label.time) } }
            falseAlarms += o.falseAlarms.count
            recoveredReports += o.recoveredReports.count
            wornHours += o.wornSeconds / 3600
            for (activity, seconds) in o.wornSecondsByActivity { byActivity[activity, default: ActivityScore()].hours += seconds / 3600 }
            for activity in o.falseAlarmActivities { byActivity[activity, default: ActivityScore()].falseAlarms += 1 }
            for (activity, tally) in o.tallies { byActivity[activity, default: ActivityScore()].tally = byActivity[activity, default: ActivityScore()].tally + tally }
        }
        fallTally.delays.sort()
    }


    public var sensitivity: Double? { fallTally.sensitivity }
    public var falseAlarmsPerHour: Double? { wornHours > 0 ? Double(falseAlarms) / wornHours : nil }
}

public enum EventEvaluator {
    /// Seconds between a labelled fall and a detection's impact for it to count (`--tolerance`).
    public static let defaultTolerance = 5.0

    /// Walking and not-worn per activity over the 40 Hz stream, each 40 Hz sample counted as
    /// 25 ms of the activity it falls in.
    static func tally(_ r: AccelerationSample, afterGap: Bool, activities: [ActivitySpan], walking: inout WalkingDetector,
                      notWorn: inout NotWornDetector, into tallies: inout [String: ActivityTally]) {
        if afterGap { walking.reset(); notWorn.reset() }
        let walks = walking.process(r)
        let off = notWorn.process(r)
        let span = ActivitiesFile.span(at: r.time, in: activities)
        let step = 1 / detectorRate
        var t = tallies[span?.activity ?? ActivitySpan.unlabelled, default: ActivityTally()]
        t.seconds += step
        if walks { t.walkingSeconds += step }
        if off { t.notWornSeconds += step }
        if let span, r.time - span.start >= ActivityTally.settle {
            t.settledSeconds += step
            if walks { t.settledWalkingSeconds += step }
        }
        tallies[span?.activity ?? ActivitySpan.unlabelled] = t
    }

    /// Scores one recording against its labels.
    public static func outcome(path: String, recording: Recording, labels: [EventLabel], activities: [ActivitySpan] = [],
                               configuration: DetectorConfiguration, tolerance: Double = defaultTolerance) -> EventOutcome {
        let spans = notWornSpans(labels, end: recording.samples.last?.time ?? 0)
        let inSpan = { (t: Double) in spans.contains { $0.contains(t) } }
        var walking = WalkingDetector(), notWorn = NotWornDetector(settings: .init(after: 60))
        var tallies: [String: ActivityTally] = [:]
        let observe: ((AccelerationSample, Bool) -> Void)? = activities.isEmpty ? nil : { r, afterGap in
            tally(r, afterGap: afterGap, activities: activities, walking: &walking, notWorn: &notWorn, into: &tallies)
        }
        let all = DetectorRunner.detections(in: recording.samples, configuration: configuration, observe: observe)
            .filter { !inSpan($0.impactTime) }
        var unmatched = all
        var falls: [(label: EventLabel, detection: FallSuspected?)] = []
        for label in labels where label.kind == .fall {
            // The nearest detection within the tolerance, each detection for one fall only.
            let best = unmatched.indices.filter { abs(unmatched[$0].impactTime - label.time) <= tolerance }
                .min { abs(unmatched[$0].impactTime - label.time) < abs(unmatched[$1].impactTime - label.time) }
            falls.append((label, best.map { unmatched.remove(at: $0) }))
        }
        let worn = wornSeconds(recording.samples, excluding: spans, activities: activities)
        return EventOutcome(path: path, labels: labels, detections: all, falls: falls,
                            falseAlarms: unmatched.filter { $0.recoveredAfter == nil },
                            recoveredReports: unmatched.filter { $0.recoveredAfter != nil },
                            wornSeconds: worn.total, activities: activities, wornSecondsByActivity: worn.byActivity, tallies: tallies)
    }

    /// The not-worn spans: each start to its end (or to `end` when the recording ends first).
    static func notWornSpans(_ labels: [EventLabel], end: Double) -> [ClosedRange<Double>] {
        var spans: [ClosedRange<Double>] = []
        var start: Double?
        for l in labels {
            switch l.kind {
            case .notWornStart: if start == nil { start = l.time }
            case .notWornEnd: if let s = start { spans.append(s...max(s, l.time)); start = nil }
            case .fall: break
            }
        }
        if let s = start { spans.append(s...max(s, end)) }
        return spans
    }

    /// Seconds covered by samples (steps of up to 0.25 s; longer ones are gaps), outside `spans`,
    /// in all and per activity (each step counted for the activity at its start).
    static func wornSeconds(_ samples: [AccelerationSample], excluding spans: [ClosedRange<Double>],
                            activities: [ActivitySpan] = []) -> (total: Double, byActivity: [String: Double]) {
        var total = 0.0
        var byActivity: [String: Double] = [:]
        for (a, b) in zip(samples, samples.dropFirst()) {
            let step = b.time - a.time
            guard step > 0, step <= 0.25, !spans.contains(where: { $0.contains(a.time) }) else { continue }
            total += step
            if !activities.isEmpty { byActivity[ActivitiesFile.activity(at: a.time, in: activities), default: 0] += step }
        }
        return (total, byActivity)
    }
}

extension EventEvaluator {
    /// Scores every labelled recording of `dataset`, on `threads` threads. A recording or
    /// sidecar that cannot be read stops it with its error, unless `skipBad` (then listed).
    public static func evaluate(_ dataset: Dataset, configuration: DetectorConfiguration, tolerance: Double = defaultTolerance,
                                skipBad: Bool = false, threads: Int = 2) throws(RecordingFileError) -> (outcomes: [EventOutcome], skipped: [RecordingFileError]) {
        let paths = dataset.recordings
        let results = parallelMap(paths.count, threads: threads, state: [UInt8]()) { buffer, i -> Result<EventOutcome, RecordingFileError> in
            Result { () throws(RecordingFileError) -> EventOutcome in
                let labels = try LabelsFile.read(path: LabelsFile.sidecar(of: paths[i]))
                let activities = try ActivitiesFile.read(besides: paths[i])
                let recording = try RecordingFile.read(path: paths[i], reusing: &buffer)
                return outcome(path: paths[i], recording: recording, labels: labels, activities: activities,
                               configuration: configuration, tolerance: tolerance)
            }
        }
        return try gather(results, skipBad: skipBad)
    }
}

/// The event-level part of `fallguard evaluate --json` (`events`).
public struct EventSummary: Codable, Sendable {
    public struct Recording: Codable, Sendable, Equatable {
        public var path: String
        public var falls: Int
        public var detected_falls: Int
        public var false_alarms: Int
        public var worn_hours: Double
        /// Labelled falls no detection found, by their time.
        public var missed_s: [Double]
        /// Impacts of the detections that match no labelled fall.
        public var false_alarm_impacts_s: [Double]
        /// The activity at each of them (with an activities sidecar).
        public var false_alarm_activities: [String]?
        /// Impacts of every detection (outside the not-worn spans).
        public var detection_impacts_s: [Double]
        public var delays_s: [Double]
    }

    public var tolerance_s: Double
    public var recordings: Int
    public var falls: Int
    public var detected_falls: Int
    public var sensitivity: Double?
    public var false_alarms: Int
    /// Detections outside the labelled falls whose wearer was up again within the countdown.
    public var recovered_reports: Int
    public var worn_hours: Double
    public var false_alarms_per_hour: Double?
    public var delay_s: EvaluationSummary.Delay
    public var per_recording: [Recording]
    /// False alarms per activity, from the recordings' activities sidecars (nil without any).
    public var per_activity: [Activity]?

    public struct Activity: Codable, Sendable, Equatable {
        public var activity: String
        public var worn_hours: Double
        public var false_alarms: Int
        public var false_alarms_per_hour: Double?
        /// Share of the activity's time `WalkingDetector` called walking: all of it, and from
        /// 5 s into each span (the recognition a walk may take).
        public var walking_percent: Double
        public var walking_after_5s_percent: Double?
        /// Seconds `NotWornDetector` (after one lifeless minute, its shortest setting) called not worn.
        public var not_worn_s: Double
    }

    public init(_ outcomes: [EventOutcome], tolerance: Double) {
        let s = EventScores(outcomes), t = s.fallTally
        tolerance_s = tolerance
        recordings = s.recordings
        falls = t.falls
        detected_falls = t.detected
        sensitivity = s.sensitivity
        false_alarms = s.falseAlarms
        recovered_reports = s.recoveredReports
        worn_hours = s.wornHours
        false_alarms_per_hour = s.falseAlarmsPerHour
        delay_s = EvaluationSummary.Delay(median: t.delayQuantile(0.5), p95: t.delayQuantile(0.95), max: t.delays.last)
        per_recording = outcomes.map { o in
            Recording(path: o.path, falls: o.falls.count, detected_falls: o.falls.filter { $0.detection != nil }.count,
                      false_alarms: o.falseAlarms.count, worn_hours: o.wornSeconds / 3600,
                      missed_s: o.falls.filter { $0.detection == nil }.map(\.label.time),
                      false_alarm_impacts_s: o.falseAlarms.map(\.impactTime),
                      false_alarm_activities: o.activities.isEmpty ? nil : o.falseAlarmActivities,
                      detection_impacts_s: o.detections.map(\.impactTime),
                      delays_s: o.falls.compactMap { f in f.detection.map { $0.decisionTime - f.label.time } })
        }
        per_activity = s.byActivity.isEmpty ? nil : s.byActivity.keys.sorted().map { a in
            let v = s.byActivity[a]!
            let t = v.tally
            return Activity(activity: a, worn_hours: v.hours, false_alarms: v.falseAlarms,
                            false_alarms_per_hour: v.hours > 0 ? Double(v.falseAlarms) / v.hours : nil,
                            walking_percent: t.seconds > 0 ? 100 * t.walkingSeconds / t.seconds : 0,
                            walking_after_5s_percent: t.settledSeconds > 0 ? 100 * t.settledWalkingSeconds / t.settledSeconds : nil,
                            not_worn_s: t.notWornSeconds)
        }
    }

    /// The "Events" section of the text report.
    public func text() -> String {
        func pct(_ v: Double?) -> String { v.map { String(format: "%.2f %%", $0) } ?? "n/a" }
        func sec(_ v: Double?) -> String { v.map { String(format: "%.2f s", $0) } ?? "n/a" }
        var out = "\nEvents        \(recordings) continuous recordings, \(String(format: "%.2f", worn_hours)) h worn (not-worn spans and gaps left out)\n"
        out += "Falls         \(detected_falls) of \(falls) labelled falls detected (\(pct(sensitivity))), a detection's impact within ±\(String(format: "%g", tolerance_s)) s\n"
        out += "False alarms  \(false_alarms), \(false_alarms_per_hour.map { String(format: "%.2f", $0) } ?? "n/a") per hour of wear"
            + (recovered_reports > 0 ? " (and \(recovered_reports) recovered-fall reports: up again within the countdown, no alarm)" : "") + "\n"
        out += "Delay         after the labelled impact: median \(sec(delay_s.median)), max \(sec(delay_s.max))\n"
        for r in per_recording where !r.missed_s.isEmpty || !r.false_alarm_impacts_s.isEmpty {
            out += "  \(r.path):"
            if !r.missed_s.isEmpty { out += " missed the falls at " + r.missed_s.map { String(format: "%.2f s", $0) }.joined(separator: ", ") + ";" }
            if !r.false_alarm_impacts_s.isEmpty {
                let activities = r.false_alarm_activities ?? []
                out += " false alarms at " + r.false_alarm_impacts_s.enumerated().map { i, t in
                    String(format: "%.2f s", t) + (i < activities.count ? " (\(activities[i]))" : "")
                }.joined(separator: ", ")
            }
            out += "\n"
        }
        if let per_activity {
            out += "By activity   (the activities sidecars: hours worn, false alarms and per hour of that activity; walking: share called walking, all and from 5 s in; not worn: seconds)\n"
            for a in per_activity {
                out += "  " + a.activity.padding(toLength: max(20, a.activity.count), withPad: " ", startingAt: 0)
                    + String(format: " %7.3f h  %3d false alarms  %@ per hour  walking %6.2f %% (%@ from 5 s)  not worn %.0f s\n",
                             a.worn_hours, a.false_alarms, a.false_alarms_per_hour.map { String(format: "%6.2f", $0) } ?? "   n/a",
                             a.walking_percent, a.walking_after_5s_percent.map { String(format: "%6.2f %%", $0) } ?? "   n/a", a.not_worn_s)
            }
        }
        return out
    }
}
