import ArgumentParser
import FallGuardCore
import FallGuardFieldTest
import Foundation

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write one self-contained HTML page: the summary, the per-activity table and a plot for every detection, miss and false alarm.",
        discussion: """
            DIR is what `fallguard evaluate` takes (trials, and continuous recordings with a \
            <name>.labels.csv); RECORDING is one recording (.csv or .csv.gz), with its sidecar if \
            it has one (without one, every detection is plotted as a false alarm to look at). The \
            page needs no network (inline CSS and SVG, no script): open it in any browser, or send \
            it. Each plot shows |a| and its 125 ms mean, the detector's thresholds on |a|, the \
            impact's ±1 s and what was watched until the decision, and the features that decided.

            Exit status: 0, 65 for a malformed file (path:line: reason), 66 for nothing to report, \
            73 when the page cannot be written.
            """)

    @Argument(help: ArgumentHelp("Dataset folder or one recording.", valueName: "dir|recording"))
    var input: String

    @Option(help: ArgumentHelp("The HTML file to write.", valueName: "file"))
    var out: String

    @OptionGroup var detectorOptions: DetectorOptions

    @OptionGroup var matching: ToleranceOption
    @OptionGroup var workers: ThreadsOption

    func run() throws {
        let configuration = try detectorOptions.configuration()
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else {
            printError("\(input): no such file or folder")
            throw ExitStatus.noInput
        }
        let dataset: Dataset
        if isFolder.boolValue {
            dataset = try scanDataset(input)
        } else {
            let name = input.split(separator: "/").last.map(String.init) ?? input
            let trialName = name.hasSuffix(".gz") ? String(name.dropLast(3)) : name
            if let label = TrialLabel(fileName: trialName) {
                dataset = Dataset(root: input, trials: [LabelledTrial(path: input, label: label)], unlabelled: [])
            } else {
                dataset = Dataset(root: input, trials: [], recordings: [input], unlabelled: [])
            }
        }
        let report: HTMLReport
        do { report = try makeReport(dataset, configuration: configuration) } catch {
            printError(error.description)
            throw ExitStatus.dataError
        }
        do { try report.html().write(toFile: out, atomically: true, encoding: .utf8) } catch {
            printError("\(out): \(error.localizedDescription)")
            throw ExitStatus.cantCreate
        }
        let counts = Dictionary(grouping: report.cases, by: \.kind).mapValues(\.count)
        print("\(out): \(report.cases.count) plots (\(counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")))")
    }

    /// Scores `dataset` and plots what a person must see; a file that cannot be read stops it.
    private func makeReport(_ dataset: Dataset, configuration: DetectorConfiguration) throws(RecordingFileError) -> HTMLReport {
        let (threads, tolerance) = (workers.threads, matching.tolerance)
        let evaluation = try Evaluator.evaluate(dataset, configuration: configuration, threads: threads)
        var events: [EventOutcome] = []
        for path in dataset.recordings {
            let sidecar = LabelsFile.sidecar(of: path)
            let labels = FileManager.default.fileExists(atPath: sidecar) ? try LabelsFile.read(path: sidecar) : []
            events.append(EventEvaluator.outcome(path: path, recording: try RecordingFile.read(path: path), labels: labels,
                                                 activities: try ActivitiesFile.read(besides: path),
                                                 configuration: configuration, tolerance: tolerance))
        }
        var summary = EvaluationSummary(evaluation, configuration: configuration, dataset: input, includeTrials: false)
        if !dataset.recordings.isEmpty { summary.events = EventSummary(events, tolerance: tolerance) }
        var report = HTMLReport(title: "FallGuard field-test report: \(input)", summary: summary)
        // Only what is plotted is read again: detections, misses and false alarms.
        for o in evaluation.outcomes where !o.detections.isEmpty || (o.trial.label.kind == .fall && !o.tooShort) {
            report.add(o, samples: try RecordingFile.read(path: o.trial.path).samples, configuration: configuration)
        }
        for o in events where !o.falls.isEmpty || !o.falseAlarms.isEmpty {
            report.add(o, samples: try RecordingFile.read(path: o.path).samples, configuration: configuration)
        }
        return report
    }
}
