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
        /// Fall trials: detected (an alarm or a recovered fall); ADL trials: alarmed.
        public var alarms: Int
        /// Of those (falls) or besides them (ADLs): trials told only as a recovered fall.
        public var recovered: Int
        public var rate: Double
        /// Trials of this code too short to judge (not in `trials`).
        public var too_short: Int
    }
    /// Figures for one population (or for its trials of the focus codes).
    public struct PopulationRow: Codable, Sendable {
        public var population: String
        public var subjects: Int
        public var falls: Int
        public var detected_falls: Int
        public var sensitivity: Double?
        public var adls: Int
        public var alarmed_adls: Int
        public var specificity: Double?
        public var too_short: Int
    }
    /// A trial that ended while a decision was still due.
    public struct TooShort: Codable, Sendable {
        public var path: String
        public var code: String
        public var subject: String
        public var kind: String
        public var rule: String
        public var impact_s: Double
        public var due_s: Double
        public var duration_s: Double
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
        /// Of those, the falls the wearer was up again from within the countdown.
        public var recovered: Int
        /// Seconds from the impact to up again, for the first detection that recovered.
        public var recovered_after_s: Double?
        public var first_decision_s: Double?
        public var first_impact_s: Double?
        public var reference_impact_s: Double
        public var reason: String?
        public var too_short: Bool
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
    /// Fall trials detected only as recovered falls (in `detected_falls`).
    public var recovered_falls: Int
    /// ADL trials told only as a recovered fall (not in `alarmed_adls`), and every such detection.
    public var recovered_adls: Int
    public var recovered_reports: Int
    /// The countdown the recovery was watched for after each detection, in seconds.
    public var countdown_s: Double
    public var adl_hours: Double
    public var false_alarms_per_hour: Double?
    public var falls_detected_off_impact: Int
    /// Trials that ended while a decision was still due (not in falls/adls above), and which.
    public var too_short: Int
    public var too_short_falls: Int
    public var too_short_adls: Int
    public var too_short_trials: [TooShort]
    public var delay_s: Delay
    public var by_code: [CodeRow]
    public var by_population: [PopulationRow]
    /// The codes of `focus_by_population` (e.g. F10, F13), empty when none was asked for.
    public var focus_codes: [String]
    public var focus_by_population: [PopulationRow]
    public var skipped: [Skipped]
    public var trials: [Trial]?
    /// Continuous recordings with labels, scored by events (nil when the folder has none).
    public var events: EventSummary?

    public init(_ e: Evaluation, configuration: DetectorConfiguration, dataset: String, includeTrials: Bool,
                populations: Populations = Populations(), focusCodes: [String] = []) {
        let s = e.scores, t = s.fallTally
        detector = configuration.name
        settings = configuration.settings.values
        changed_settings = configuration.settings.changed
        self.dataset = dataset
        sensitivity = s.sensitivity
        specificity = s.specificity
        accuracy = s.accuracy
        falls = t.falls
        detected_falls = t.detected
        adls = s.adls
        alarmed_adls = s.alarmedADLs
        false_alarms = s.falseAlarms
        recovered_falls = s.recoveredFalls
        recovered_adls = s.recoveredADLs
        recovered_reports = s.recoveredReports
        countdown_s = RecoveryWatch.countdown
        adl_hours = s.adlHours
        false_alarms_per_hour = s.falseAlarmsPerHour
        falls_detected_off_impact = s.fallsDetectedOffImpact
        too_short = s.tooShort
        too_short_falls = s.tooShortFalls
        too_short_adls = s.tooShortADLs
        too_short_trials = e.outcomes.compactMap { o in
            o.undecided.map { u in
                TooShort(path: o.trial.path, code: o.trial.label.code, subject: o.trial.label.subject,
                         kind: o.trial.label.kind.rawValue, rule: u.rule, impact_s: u.impactTime, due_s: u.dueTime,
                         duration_s: o.duration)
            }
        }
        func rows(_ groups: [(population: String, scores: Scores)], _ outcomes: [TrialOutcome]) -> [PopulationRow] {
            groups.map { name, p in
                let subjects = Set(outcomes.filter { populations.name(of: $0.trial.label.subject) == name }.map(\.trial.label.subject))
                return PopulationRow(population: name, subjects: subjects.count, falls: p.fallTally.falls, detected_falls: p.fallTally.detected,
                                     sensitivity: p.sensitivity, adls: p.adls, alarmed_adls: p.alarmedADLs,
                                     specificity: p.specificity, too_short: p.tooShort)
            }
        }
        by_population = rows(e.byPopulation(populations), e.outcomes)
        focus_codes = focusCodes
        focus_by_population = focusCodes.isEmpty ? [] : rows(e.byPopulation(populations, codes: Set(focusCodes)), e.outcomes)
        delay_s = Delay(median: t.delayQuantile(0.5), p95: t.delayQuantile(0.95), max: t.delays.last)
        by_code = e.byCode.map { code, cs in
            let isFall = cs.fallTally.falls + cs.tooShortFalls > 0
            let trials = isFall ? cs.fallTally.falls : cs.adls
            let alarms = isFall ? cs.fallTally.detected : cs.alarmedADLs
            return CodeRow(code: code, kind: isFall ? "fall" : "adl",
                           description: e.codeNames[code] ?? "",
                           trials: trials, alarms: alarms, recovered: isFall ? cs.recoveredFalls : cs.recoveredADLs,
                           rate: trials == 0 ? 0 : 100 * Double(alarms) / Double(trials),
                           too_short: cs.tooShort)
        }
        skipped = e.skipped.map { Skipped(path: $0.path, line: $0.line, reason: $0.reason) }
        trials = includeTrials ? e.outcomes.map { o in
            Trial(path: o.trial.path, code: o.trial.label.code, subject: o.trial.label.subject,
                  kind: o.trial.label.kind.rawValue, detections: o.detections.count,
                  recovered: o.detections.count { $0.recoveredAfter != nil },
                  recovered_after_s: o.detections.lazy.compactMap(\.recoveredAfter).first,
                  first_decision_s: o.detections.first?.decisionTime, first_impact_s: o.detections.first?.impactTime,
                  reference_impact_s: o.referenceImpact, reason: o.detections.first?.reason, too_short: o.tooShort)
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
        if falls + adls + too_short == 0, let events {   // continuous recordings only
            out += "Dataset       \(dataset)\n" + events.text().dropFirst()
            for s in skipped { out += "Skipped       \(s.path)\(s.line.map { ":\($0)" } ?? ""): \(s.reason)\n" }
            return out
        }
        out += "Dataset       \(dataset): \(falls + adls) trials (\(falls) falls, \(adls) ADLs, \(String(format: "%.2f", adl_hours)) h of ADL)\n"
        out += "Sensitivity  \(pct(sensitivity))  \(detected_falls) of \(falls) fall trials detected"
            + (recovered_falls > 0 ? " (\(recovered_falls) as a recovered fall: up again within the \(Int(countdown_s)) s countdown)" : "") + "\n"
        out += "Specificity  \(pct(specificity))  \(adls - alarmed_adls) of \(adls) ADL trials without an alarm"
            + (recovered_adls > 0 ? " (\(recovered_adls) told as a recovered fall)" : "") + "\n"
        out += "Accuracy     \(pct(accuracy))\n"
        out += "False alarms  \(false_alarms_per_hour.map { String(format: "%.2f", $0) } ?? "n/a") per hour of ADL (\(false_alarms) alarms)\n"
        out += "Delay         after the impact peak: median \(sec(delay_s.median)), p95 \(sec(delay_s.p95)), max \(sec(delay_s.max))\n"
        if falls_detected_off_impact > 0 {
            out += "Off impact    \(falls_detected_off_impact) fall trials first detected more than 3 s from the impact peak\n"
        }
        if too_short > 0 {
            out += "Too short     \(too_short) trials (\(too_short_falls) falls, \(too_short_adls) ADLs) ended while a decision was still due; not scored above (listed below)\n"
        }
        if by_population.count > 1 || !focus_by_population.isEmpty {
            out += "\nPopulation        Subjects  Falls  Detected  Sensitivity    ADLs  Alarms  Specificity  Too short\n"
            func line(_ label: String, _ r: PopulationRow) -> String {
                label.padding(toLength: 18, withPad: " ", startingAt: 0)
                    + String(format: "%8d  %5d  %8d  ", r.subjects, r.falls, r.detected_falls) + pct(r.sensitivity)
                    + String(format: "    %4d  %6d  ", r.adls, r.alarmed_adls) + pct(r.specificity)
                    + String(format: "  %9d\n", r.too_short)
            }
            for r in by_population { out += line(r.population, r) }
            let focus = focus_codes.joined(separator: "+")
            for r in focus_by_population { out += line("\(r.population) \(focus)", r) }
        }
        // Codes as written in the file names; the column is as wide as the longest.
        let codeWidth = max(4, by_code.map(\.code.count).max() ?? 0)
        out += "\n" + "Code".padding(toLength: codeWidth + 2, withPad: " ", startingAt: 0)
            + "Activity                                  Trials  Alarms    Rate\n"
        for r in by_code {
            let d = r.description.count > 40 ? String(r.description.prefix(39)) + "…" : r.description
            let note = (r.kind == "fall"
                ? (r.alarms < r.trials ? "  \(r.trials - r.alarms) missed" : "")
                : (r.alarms > 0 ? "  \(r.alarms) false" : ""))
                + (r.recovered > 0 ? "  \(r.recovered) recovered" : "")
            let short = r.too_short > 0 ? "  \(r.too_short) too short" : ""
            out += r.code.padding(toLength: codeWidth + 2, withPad: " ", startingAt: 0)
                + d.padding(toLength: 40, withPad: " ", startingAt: 0)
                + String(format: "  %6d  %6d  %5.1f %%", r.trials, r.alarms, r.rate) + note + short + "\n"
        }
        if !too_short_trials.isEmpty {
            out += "\nToo short to judge (\(too_short_trials.count)): the recording ended before the decision was due\n"
            for t in too_short_trials {
                out += "  \(t.path): \(t.kind), \(t.rule) for the impact at \(String(format: "%.2f", t.impact_s)) s due at "
                    + "\(String(format: "%.2f", t.due_s)) s, recording ends at \(String(format: "%.2f", t.duration_s)) s\n"
            }
        }
        if let events { out += events.text() }
        if !skipped.isEmpty {
            out += "\nSkipped \(skipped.count) unreadable files:\n"
            for s in skipped { out += "  \(s.path)\(s.line.map { ":\($0)" } ?? ""): \(s.reason)\n" }
        }
        return out
    }

    private var settingsText: String { changed_settings.isEmpty ? "" : " (" + changed_settings.joined(separator: ", ") + ")" }
}
