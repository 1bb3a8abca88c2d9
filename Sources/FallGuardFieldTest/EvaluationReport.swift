import FallGuardCore
import Foundation

/// The machine-readable form of an ``Evaluation`` (`fallguard evaluate --json`).
public struct EvaluationSummary: Codable, Sendable {
    public struct Delay: Codable, Sendable {
        public var median: Double?
        public var p95: Double?
        public var max: Double?
    }
    public struct CodeRow: Codable, Sendable {
        public var code: String
        public var kind: String
        public var description: String
        public var trials: Int
        public var alarms: Int
        public var rate: Double
    }
    public struct Skipped: Codable, Sendable {
        public var path: String
        public var line: Int?
        public var reason: String
    }
    public struct Trial: Codable, Sendable {
        public var path: String
        public var code: String
        public var subject: String
        public var kind: String
        public var detections: Int
        public var first_decision_s: Double?
        public var first_impact_s: Double?
        public var reference_impact_s: Double
        public var reason: String?
    }

    public var detector: String
    public var settings: [String: Double]
    public var changed_settings: [String]
    public var dataset: String
    public var sensitivity: Double?
    public var specificity: Double?
    public var accuracy: Double?
    public var falls: Int
    public var detected_falls: Int
    public var adls: Int
    public var alarmed_adls: Int
    public var false_alarms: Int
    public var adl_hours: Double
    public var false_alarms_per_hour: Double?
    public var falls_detected_off_impact: Int
    public var delay_s: Delay
    public var by_code: [CodeRow]
    public var skipped: [Skipped]
    public var trials: [Trial]?

    public init(_ e: Evaluation, configuration: DetectorConfiguration, dataset: String, includeTrials: Bool) {
        let s = e.scores
        detector = configuration.name
        settings = configuration.settings.values
        changed_settings = configuration.settings.changed
        self.dataset = dataset
        sensitivity = s.sensitivity
        specificity = s.specificity
        accuracy = s.accuracy
        falls = s.falls
        detected_falls = s.detectedFalls
        adls = s.adls
        alarmed_adls = s.alarmedADLs
        false_alarms = s.falseAlarms
        adl_hours = s.adlHours
        false_alarms_per_hour = s.falseAlarmsPerHour
        falls_detected_off_impact = s.fallsDetectedOffImpact
        delay_s = Delay(median: s.delayQuantile(0.5), p95: s.delayQuantile(0.95), max: s.delays.last)
        by_code = e.byCode.map { code, cs in
            let isFall = cs.falls > 0
            let trials = isFall ? cs.falls : cs.adls
            let alarms = isFall ? cs.detectedFalls : cs.alarmedADLs
            return CodeRow(code: code, kind: isFall ? "fall" : "adl",
                           description: ActivityCodes.descriptions[code] ?? "",
                           trials: trials, alarms: alarms,
                           rate: trials == 0 ? 0 : 100 * Double(alarms) / Double(trials))
        }
        skipped = e.skipped.map { Skipped(path: $0.path, line: $0.line, reason: $0.reason) }
        trials = includeTrials ? e.outcomes.map { o in
            Trial(path: o.trial.path, code: o.trial.label.code, subject: o.trial.label.subject,
                  kind: o.trial.label.kind.rawValue, detections: o.detections.count,
                  first_decision_s: o.detections.first?.decisionTime, first_impact_s: o.detections.first?.impactTime,
                  reference_impact_s: o.referenceImpact, reason: o.detections.first?.reason)
        } : nil
    }

    public func json() -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try! enc.encode(self), as: UTF8.self)
    }

    /// The report a person reads.
    public func text() -> String {
        var out = ""
        func pct(_ v: Double?) -> String { v.map { String(format: "%6.2f %%", $0) } ?? "   n/a  " }
        func sec(_ v: Double?) -> String { v.map { String(format: "%.2f s", $0) } ?? "n/a" }
        out += "Detector      \(detector)\(settingsText)\n"
        out += "Dataset       \(dataset): \(falls + adls) trials (\(falls) falls, \(adls) ADLs, \(String(format: "%.2f", adl_hours)) h of ADL)\n"
        out += "Sensitivity  \(pct(sensitivity))  \(detected_falls) of \(falls) fall trials detected\n"
        out += "Specificity  \(pct(specificity))  \(adls - alarmed_adls) of \(adls) ADL trials without an alarm\n"
        out += "Accuracy     \(pct(accuracy))\n"
        out += "False alarms  \(false_alarms_per_hour.map { String(format: "%.2f", $0) } ?? "n/a") per hour of ADL (\(false_alarms) alarms)\n"
        out += "Delay         after the impact peak: median \(sec(delay_s.median)), p95 \(sec(delay_s.p95)), max \(sec(delay_s.max))\n"
        if falls_detected_off_impact > 0 {
            out += "Off impact    \(falls_detected_off_impact) fall trials first detected more than 3 s from the impact peak\n"
        }
        out += "\nCode  Activity                                  Trials  Alarms    Rate\n"
        for r in by_code {
            let d = r.description.count > 40 ? String(r.description.prefix(39)) + "…" : r.description
            let note = r.kind == "fall"
                ? (r.alarms < r.trials ? "  \(r.trials - r.alarms) missed" : "")
                : (r.alarms > 0 ? "  \(r.alarms) false" : "")
            out += r.code + "   " + d.padding(toLength: 40, withPad: " ", startingAt: 0)
                + String(format: "  %6d  %6d  %5.1f %%", r.trials, r.alarms, r.rate) + note + "\n"
        }
        if !skipped.isEmpty {
            out += "\nSkipped \(skipped.count) unreadable files:\n"
            for s in skipped { out += "  \(s.path)\(s.line.map { ":\($0)" } ?? ""): \(s.reason)\n" }
        }
        return out
    }

    private var settingsText: String { changed_settings.isEmpty ? "" : " (" + changed_settings.joined(separator: ", ") + ")" }
}
