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

public enum LabelsFile {
    public static let suffix = ".labels.csv"
    public static let header = "t_s,label"

    /// The sidecar of a recording: `x.csv` and `x.csv.gz` → `x.labels.csv`.
    public static func sidecar(of recording: String) -> String {
        var stem = recording
        for ext in [".gz", ".csv"] where stem.hasSuffix(ext) { stem.removeLast(ext.count) }
        return stem + suffix
    }

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

/// What a detector did on one continuous recording, scored by events.
public struct EventOutcome: Sendable {
    public var path: String
    public var labels: [EventLabel]
    /// Every detection outside the not-worn spans.
    public var detections: [FallSuspected]
    /// Each labelled fall with the detection that found it (its impact within the tolerance).
    public var falls: [(label: EventLabel, detection: FallSuspected?)]
    /// Detections that match no labelled fall.
    public var falseAlarms: [FallSuspected]
    /// Seconds the device was worn: the recording's samples, less the not-worn spans and gaps.
    public var wornSeconds: Double
}

/// Event-level figures over continuous recordings.
public struct EventScores: Sendable, Equatable {
    public var recordings = 0
    public var falls = 0
    public var detectedFalls = 0
    public var falseAlarms = 0
    public var wornHours = 0.0
    /// Sorted seconds from the labelled impact to the decision, for detected falls.
    public var delays: [Double] = []

    public init(_ outcomes: [EventOutcome]) {
        for o in outcomes {
            recordings += 1
            falls += o.falls.count
            for f in o.falls { if let d = f.detection { detectedFalls += 1; delays.append(d.decisionTime - f.label.time) } }
            falseAlarms += o.falseAlarms.count
            wornHours += o.wornSeconds / 3600
        }
        delays.sort()
    }

    public var sensitivity: Double? { falls == 0 ? nil : 100 * Double(detectedFalls) / Double(falls) }
    public var falseAlarmsPerHour: Double? { wornHours > 0 ? Double(falseAlarms) / wornHours : nil }
    public var medianDelay: Double? { delays.isEmpty ? nil : delays[(delays.count - 1) / 2] }
    public var maxDelay: Double? { delays.last }
}

public enum EventEvaluator {
    /// Seconds between a labelled fall and a detection's impact for it to count (`--tolerance`).
    public static let defaultTolerance = 5.0

    /// Runs a fresh detector over a whole recording as the bridge does: through the 40 Hz
    /// resampler, the detector starting afresh after every gap (longer than 0.25 s), so that
    /// no window spans missing data.
    public static func detections(in samples: [AccelerationSample], configuration: DetectorConfiguration) -> [FallSuspected] {
        var detector = configuration.makeDetector()
        guard var resampler = try? Resampler(inputRate: detectorRate) else { return [] }
        var found: [FallSuspected] = []
        var gaps = 0
        var out: [AccelerationSample] = []
        for s in samples {
            out.removeAll(keepingCapacity: true)
            resampler.process(s) { out.append($0) }
            if resampler.gaps != gaps { gaps = resampler.gaps; detector.reset() }
            for r in out { if let d = detector.process(r) { found.append(d) } }
        }
        return found
    }

    /// Scores one recording against its labels.
    public static func outcome(path: String, recording: Recording, labels: [EventLabel], configuration: DetectorConfiguration,
                               tolerance: Double = defaultTolerance) -> EventOutcome {
        let spans = notWornSpans(labels, end: recording.samples.last?.time ?? 0)
        let inSpan = { (t: Double) in spans.contains { $0.contains(t) } }
        let all = detections(in: recording.samples, configuration: configuration).filter { !inSpan($0.impactTime) }
        var unmatched = all
        var falls: [(label: EventLabel, detection: FallSuspected?)] = []
        for label in labels where label.kind == .fall {
            // The nearest detection within the tolerance, each detection for one fall only.
            let best = unmatched.indices.filter { abs(unmatched[$0].impactTime - label.time) <= tolerance }
                .min { abs(unmatched[$0].impactTime - label.time) < abs(unmatched[$1].impactTime - label.time) }
            falls.append((label, best.map { unmatched.remove(at: $0) }))
        }
        return EventOutcome(path: path, labels: labels, detections: all, falls: falls, falseAlarms: unmatched,
                            wornSeconds: wornSeconds(recording.samples, excluding: spans))
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

    /// Seconds covered by samples (steps of up to 0.25 s; longer ones are gaps), outside `spans`.
    static func wornSeconds(_ samples: [AccelerationSample], excluding spans: [ClosedRange<Double>]) -> Double {
        var total = 0.0
        for (a, b) in zip(samples, samples.dropFirst()) {
            let step = b.time - a.time
            guard step > 0, step <= 0.25, !spans.contains(where: { $0.contains(a.time) }) else { continue }
            total += step
        }
        return total
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
                let recording = try RecordingFile.read(path: paths[i], reusing: &buffer)
                return outcome(path: paths[i], recording: recording, labels: labels, configuration: configuration, tolerance: tolerance)
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
    public var worn_hours: Double
    public var false_alarms_per_hour: Double?
    public var delay_s: EvaluationSummary.Delay
    public var per_recording: [Recording]

    public init(_ outcomes: [EventOutcome], tolerance: Double) {
        let s = EventScores(outcomes)
        tolerance_s = tolerance
        recordings = s.recordings
        falls = s.falls
        detected_falls = s.detectedFalls
        sensitivity = s.sensitivity
        false_alarms = s.falseAlarms
        worn_hours = s.wornHours
        false_alarms_per_hour = s.falseAlarmsPerHour
        let q95 = s.delays.isEmpty ? nil : s.delays[min(s.delays.count - 1, Int((0.95 * Double(s.delays.count)).rounded(.up)) - 1)]
        delay_s = EvaluationSummary.Delay(median: s.medianDelay, p95: q95, max: s.maxDelay)
        per_recording = outcomes.map { o in
            Recording(path: o.path, falls: o.falls.count, detected_falls: o.falls.filter { $0.detection != nil }.count,
                      false_alarms: o.falseAlarms.count, worn_hours: o.wornSeconds / 3600,
                      missed_s: o.falls.filter { $0.detection == nil }.map(\.label.time),
                      false_alarm_impacts_s: o.falseAlarms.map(\.impactTime),
                      detection_impacts_s: o.detections.map(\.impactTime),
                      delays_s: o.falls.compactMap { f in f.detection.map { $0.decisionTime - f.label.time } })
        }
    }

    /// The "Events" section of the text report.
    public func text() -> String {
        func pct(_ v: Double?) -> String { v.map { String(format: "%.2f %%", $0) } ?? "n/a" }
        func sec(_ v: Double?) -> String { v.map { String(format: "%.2f s", $0) } ?? "n/a" }
        var out = "\nEvents        \(recordings) continuous recordings, \(String(format: "%.2f", worn_hours)) h worn (not-worn spans and gaps left out)\n"
        out += "Falls         \(detected_falls) of \(falls) labelled falls detected (\(pct(sensitivity))), a detection's impact within ±\(String(format: "%g", tolerance_s)) s\n"
        out += "False alarms  \(false_alarms), \(false_alarms_per_hour.map { String(format: "%.2f", $0) } ?? "n/a") per hour of wear\n"
        out += "Delay         after the labelled impact: median \(sec(delay_s.median)), max \(sec(delay_s.max))\n"
        for r in per_recording where !r.missed_s.isEmpty || !r.false_alarm_impacts_s.isEmpty {
            out += "  \(r.path):"
            if !r.missed_s.isEmpty { out += " missed the falls at " + r.missed_s.map { String(format: "%.2f s", $0) }.joined(separator: ", ") + ";" }
            if !r.false_alarm_impacts_s.isEmpty { out += " false alarms at " + r.false_alarm_impacts_s.map { String(format: "%.2f s", $0) }.joined(separator: ", ") }
            out += "\n"
        }
        return out
    }
}
