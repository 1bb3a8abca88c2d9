import FallGuardCore

/// `fallguard report`: one self-contained HTML file (no network: inline CSS and SVG, no
/// script) with the summary, the per-activity table, and a plot for every detection, miss and
/// false alarm, so that a person sees why the detector fired or not. Correct rejections are
/// counted, not plotted.
public struct HTMLReport {
    /// One plotted case.
    public struct Case {
        public var kind: String       // "detected fall", "missed fall", "false alarm", "detection"
        public var title: String
        public var plot: SignalPlot
        public var detail: String
    }

    public var title: String
    public var summary: EvaluationSummary
    public var cases: [Case] = []

    public init(title: String, summary: EvaluationSummary) { (self.title, self.summary) = (title, summary) }

    /// Up to this many detected falls are shown open; more are folded (laid out when opened).
    static let openDetections = 50

    /// Seconds shown before and after the moment a plot is about.
    static let before = 8.0, after = 8.0

    /// The plots of one trial: its detections (a fall trial's, or an ADL trial's false alarms),
    /// or the whole stretch around its largest acceleration when a fall was missed.
    public mutating func add(_ o: TrialOutcome, samples: [AccelerationSample], configuration: DetectorConfiguration) {
        let name = o.trial.path.split(separator: "/").last.map(String.init) ?? o.trial.path
        let thresholds = SignalPlot.thresholds(of: configuration)
        if o.detections.isEmpty {
            guard o.trial.label.kind == .fall, !o.tooShort else { return }
            var p = SignalPlot(samples: samples, from: o.referenceImpact - Self.before, to: o.referenceImpact + Self.after)
            p.thresholds = thresholds
            p.marks = [.init(time: o.referenceImpact, text: "largest |a|")]
            cases.append(Case(kind: "missed fall", title: name, plot: p, detail: "no detection; the largest |a| at \(fixedDecimal(o.referenceImpact, digits: 2)) s"))
            return
        }
        for d in o.detections {
            var p = SignalPlot(samples: samples, from: d.impactTime - Self.before, to: max(d.decisionTime, d.impactTime) + 3)
            p.thresholds = thresholds
            p.detections = [d]
            cases.append(Case(kind: o.trial.label.kind == .fall ? "detected fall" : "false alarm", title: name, plot: p,
                              detail: Self.describe(d)))
        }
    }

    /// The plots of one continuous recording: each labelled fall (found or missed) and each false alarm.
    public mutating func add(_ o: EventOutcome, samples: [AccelerationSample], configuration: DetectorConfiguration) {
        let name = o.path.split(separator: "/").last.map(String.init) ?? o.path
        let thresholds = SignalPlot.thresholds(of: configuration)
        for f in o.falls {
            let end = max(f.label.time, f.detection?.decisionTime ?? f.label.time) + 3
            var p = SignalPlot(samples: samples, from: f.label.time - Self.before, to: max(end, f.label.time + Self.after))
            p.thresholds = thresholds
            p.marks = [.init(time: f.label.time, text: "labelled fall" + (f.label.note.map { ": \($0)" } ?? ""))]
            p.detections = f.detection.map { [$0] } ?? []
            cases.append(Case(kind: f.detection == nil ? "missed fall" : "detected fall", title: "\(name) at \(fixedDecimal(f.label.time, digits: 2)) s",
                              plot: p, detail: f.detection.map(Self.describe) ?? "no detection within the tolerance"))
        }
        for d in o.falseAlarms {
            var p = SignalPlot(samples: samples, from: d.impactTime - Self.before, to: max(d.decisionTime, d.impactTime) + 3)
            p.thresholds = thresholds
            p.detections = [d]
            cases.append(Case(kind: "false alarm", title: "\(name) at \(fixedDecimal(d.impactTime, digits: 2)) s", plot: p, detail: Self.describe(d)))
        }
    }

    static func describe(_ d: FallSuspected) -> String {
        "impact at \(fixedDecimal(d.impactTime, digits: 2)) s, decided at \(fixedDecimal(d.decisionTime, digits: 2)) s: " + d.reason
    }

    public func html() -> String {
        let s = summary
        func pct(_ v: Double?) -> String { v.map { fixedDecimal($0, digits: 2) + " %" } ?? "n/a" }
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(htmlEscaped(title))</title>
            <style>
            body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:72em}
            table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
            th:first-child,td:first-child,td:nth-child(2){text-align:left}.case{margin:1em 0;padding:.5em;border-left:4px solid #999}
            .missed{border-color:#c00}.false{border-color:#c60}.detected{border-color:#090}
            .detail{font-size:12px;color:#444}summary{cursor:pointer;font-weight:600;margin:.5em 0}
            </style></head><body>
            <h1>\(htmlEscaped(title))</h1>
            <p>Detector <b>\(htmlEscaped(s.detector))</b>\(s.changed_settings.isEmpty ? "" : " (" + htmlEscaped(s.changed_settings.joined(separator: ", ")) + ")"), dataset <code>\(htmlEscaped(s.dataset))</code>.</p>

            """
        if s.falls + s.adls > 0 {
            out += "<h2>Trials</h2><table id=\"summary\"><tr><th>measure</th><th>value</th></tr>"
            out += "<tr><td>sensitivity</td><td>\(pct(s.sensitivity)) (\(s.detected_falls) of \(s.falls) fall trials)</td></tr>"
            out += "<tr><td>specificity</td><td>\(pct(s.specificity)) (\(s.adls - s.alarmed_adls) of \(s.adls) ADL trials without an alarm)</td></tr>"
            out += "<tr><td>false alarms per hour of ADL</td><td>\(s.false_alarms_per_hour.map { fixedDecimal($0, digits: 2) } ?? "n/a") (\(s.false_alarms))</td></tr>"
            out += "<tr><td>delay, median / max</td><td>\(s.delay_s.median.map { fixedDecimal($0, digits: 2) + " s" } ?? "n/a") / \(s.delay_s.max.map { fixedDecimal($0, digits: 2) + " s" } ?? "n/a")</td></tr>"
            out += "<tr><td>too short to judge</td><td>\(s.too_short)</td></tr></table>\n"
            out += "<h2>Per activity</h2><table id=\"activities\"><tr><th>code</th><th>activity</th><th>trials</th><th>alarms</th><th>rate</th></tr>"
            for r in s.by_code {
                out += "<tr><td>\(htmlEscaped(r.code))</td><td>\(htmlEscaped(r.description))</td><td>\(r.trials)</td><td>\(r.alarms)</td><td>\(fixedDecimal(r.rate, digits: 1)) %</td></tr>"
            }
            out += "</table>\n"
        }
        if let e = s.events {
            out += "<h2>Continuous recordings</h2><table id=\"events\"><tr><th>measure</th><th>value</th></tr>"
            out += "<tr><td>recordings, hours worn</td><td>\(e.recordings), \(fixedDecimal(e.worn_hours, digits: 2)) h</td></tr>"
            out += "<tr><td>labelled falls detected</td><td>\(e.detected_falls) of \(e.falls) (±\(fixedDecimal(e.tolerance_s, digits: 1)) s)</td></tr>"
            out += "<tr><td>false alarms per hour of wear</td><td>\(e.false_alarms_per_hour.map { fixedDecimal($0, digits: 2) } ?? "n/a") (\(e.false_alarms))</td></tr>"
            out += "<tr><td>delay, median / max</td><td>\(e.delay_s.median.map { fixedDecimal($0, digits: 2) + " s" } ?? "n/a") / \(e.delay_s.max.map { fixedDecimal($0, digits: 2) + " s" } ?? "n/a")</td></tr></table>\n"
            if let activities = e.per_activity {
                out += "<h2>False alarms by activity</h2><table id=\"daily-living\"><tr><th>activity</th><th>hours worn</th><th>false alarms</th><th>per hour</th><th>walking (from 5 s in)</th><th>not worn</th></tr>"
                for a in activities {
                    out += "<tr><td>\(htmlEscaped(a.activity))</td><td>\(fixedDecimal(a.worn_hours, digits: 3))</td><td>\(a.false_alarms)</td><td>\(a.false_alarms_per_hour.map { fixedDecimal($0, digits: 2) } ?? "n/a")</td>"
                        + "<td>\(fixedDecimal(a.walking_percent, digits: 1)) % (\(a.walking_after_5s_percent.map { fixedDecimal($0, digits: 1) + " %" } ?? "n/a"))</td><td>\(fixedDecimal(a.not_worn_s, digits: 0)) s</td></tr>"
                }
                out += "</table>\n"
            }
        }
        // Misses and false alarms open; detected falls folded (a browser lays them out when opened).
        for (kind, heading) in [("missed fall", "Missed falls"), ("false alarm", "False alarms"), ("detected fall", "Detected falls")] {
            let these = cases.filter { $0.kind == kind }
            let open = kind != "detected fall" || these.count <= Self.openDetections
            out += "<details class=\"section\" data-kind=\"\(kind)\"\(open ? " open" : "")><summary>\(heading) (\(these.count))</summary>\n"
            let css = kind == "missed fall" ? "missed" : kind == "false alarm" ? "false" : "detected"
            for c in these {
                out += "<div class=\"case \(css)\"><div><b>\(htmlEscaped(c.title))</b></div>\(c.plot.svg())<div class=\"detail\">\(htmlEscaped(c.detail))</div></div>\n"
            }
            out += "</details>\n"
        }
        out += "<p class=\"detail\">FallGuard \(htmlEscaped(title)). Grey: |a|; black: its 125 ms mean; dashed orange: the detector's thresholds on |a|; red: the impact's ±1 s; blue: what was watched until the decision (dashed line); green: a labelled moment.</p>\n"
        return out + "</body></html>\n"
    }
}
