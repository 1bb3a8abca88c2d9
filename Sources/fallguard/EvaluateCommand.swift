import ArgumentParser
import FallGuardCore
import FallGuardFieldTest
import Foundation

struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Score a detector on a labelled dataset: sensitivity, specificity, false alarms per hour, delay.",
        discussion: """
            DIR is a folder tree of recordings named <CODE>_<SUBJECT>_R<TRIAL>.csv: the subject and \
            the trial are the last two fields and CODE is everything before them (underscores allowed). \
            CODE starts with F for a fall trial (it must be detected) or D for an activity of daily \
            living (it must not raise an alarm), followed by letters or digits: F05_SA01_R04.csv \
            (SisFall), FforwardFall_S16_R03.csv, DSitting_GettingUpOnAChair_S01_R01.csv. Scores are per \
            trial: a fall trial counts as detected if the detector fires at least once; an ADL trial \
            counts as a false alarm if it fires at all. Delay is measured from the largest acceleration \
            in a fall trial to the decision.

            A trial that ends while the detector still has a decision due (e.g. the long look after a \
            soft impact) is too short to judge: it is listed and counted apart (too_short in the JSON), \
            neither detected nor missed.

            A detection whose wearer was up again within the 30 s countdown is a recovered fall:             on a fall trial it counts as detected (recovered_falls), on an ADL trial it is no alarm             and is reported apart (recovered_adls, recovered_reports).

            Activity names: a codes.csv in DIR (CODE,ACTIVITY per line) names the codes; without             one, SisFall's names are given only when every subject is named as SisFall's (SA01, SE06).

            Populations: results are also given per population, by default the subject id without its \
            trailing digits (SA01 -> SA, SE03 -> SE); --population older=SE* or --subjects FILE name \
            them. --focus F10,F13 adds rows for those codes alone in every population.

            Continuous recordings (any other name, .csv or .csv.gz, e.g. the bridge's hourly files) \
            with a sidecar <name>.labels.csv (t_s,label[,note]: fall at an impact time, not-worn-start \
            and not-worn-end around spans the device was off the body) are scored by events: a \
            labelled fall is detected when a detection's impact lies within --tolerance seconds of it, \
            every other detection is a false alarm; false alarms per hour of wear, delay from the \
            labelled impact (JSON: events). With a second sidecar <name>.activities.csv \
            (start_s,end_s,activity: what the wearer was doing) the false alarms are also given per \
            activity and per hour of each activity (JSON: events.per_activity). A folder may mix \
            trials and such recordings.

            The incident archive (<state>/incidents) is a dataset too: each incident's signal is \
            replayed with the settings given, and the report says which labelled falls they would \
            miss and which labelled false alarms (no-fall) they would still raise.

            Exit status: 0 on success, 65 when a file is malformed (its path, line and reason are \
            printed) unless --skip-bad, 66 when DIR is missing or holds no labelled trials, 64 on bad options.
            """)

    @Argument(help: ArgumentHelp("Dataset folder.", valueName: "dir"))
    var directory: String

    @OptionGroup var detectorOptions: DetectorOptions

    @Flag(help: "Print one JSON object (sensitivity, specificity, accuracy in percent; falls, adls, false_alarms_per_hour, …).")
    var json = false

    @Flag(help: "Include every trial's outcome in the JSON output.")
    var trials = false

    @Flag(help: "Skip files that cannot be read and list them in the report, instead of stopping.")
    var skipBad = false

    @OptionGroup var populationOptions: PopulationOptions

    @OptionGroup var workers: ThreadsOption
    @OptionGroup var matching: ToleranceOption

    func run() throws {
        let (threads, tolerance) = (workers.threads, matching.tolerance)
        let configuration = try detectorOptions.configuration()
        let populations = try populationOptions.populations()
        if IncidentArchive.isArchive(directory) {
            let result = ArchiveEvaluation.evaluate(IncidentArchive(folder: directory), configuration: configuration, tolerance: tolerance)
            print(json ? result.json(detector: configuration) : result.text(detector: configuration), terminator: json ? "\n" : "")
            return
        }
        let dataset = try scanDataset(directory)
        let evaluation: Evaluation
        let events: (outcomes: [EventOutcome], skipped: [RecordingFileError])
        do {
            evaluation = try Evaluator.evaluate(dataset, configuration: configuration, skipBad: skipBad, threads: threads)
            events = try EventEvaluator.evaluate(dataset, configuration: configuration, tolerance: tolerance, skipBad: skipBad, threads: threads)
        } catch {
            printError(error.description + " (use --skip-bad to score the other files)")
            throw ExitStatus.dataError
        }
        if evaluation.outcomes.isEmpty && events.outcomes.isEmpty {
            printError("\(directory): none of the \(dataset.trials.count + dataset.recordings.count) recordings could be read")
            throw ExitStatus.dataError
        }
        var scored = evaluation
        scored.skipped += events.skipped
        var summary = EvaluationSummary(scored,
                                        configuration: configuration, dataset: directory, includeTrials: trials,
                                        populations: populations, focusCodes: populationOptions.focusCodes)
        if !dataset.recordings.isEmpty { summary.events = EventSummary(events.outcomes, tolerance: tolerance) }
        print(json ? summary.json() : summary.text(), terminator: json ? "\n" : "")
    }
}

/// How `evaluate` and `cross-validate` group subjects into populations for their reports.
struct PopulationOptions: ParsableArguments {
    @Option(name: .customLong("population"), help: ArgumentHelp(
        "A named population: subject ids or prefixes ending in *, e.g. older=SE* (repeatable; the first match names a subject).",
        valueName: "name=pattern,…"))
    var population: [String] = []

    @Option(name: .customLong("subjects"), help: ArgumentHelp(
        "A subjects file: one population per line, NAME PATTERN… (e.g. `older SE*`), # comments.", valueName: "file"))
    var subjectsFile: String?

    @Option(name: .customLong("focus"), help: ArgumentHelp(
        "Activity codes reported on their own per population, e.g. F10,F13.", valueName: "code,…"))
    var focus: String?

    var focusCodes: [String] { focus.map { $0.split(separator: ",").map(String.init) } ?? [] }

    func populations() throws -> Populations {
        var rules: [Populations.Rule] = []
        if let path = subjectsFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("--subjects \(path): cannot read the file")
            }
            do {
                rules += try Populations.parse(text).rules
            } catch {
                throw ValidationError("--subjects \(path): \(error.description)")
            }
        }
        for spec in population {
            guard let r = Populations.rule(spec) else {
                throw ValidationError("--population '\(spec)' is not of the form name=pattern,… (e.g. older=SE*)")
            }
            rules.append(r)
        }
        return Populations(rules: rules)
    }
}

/// The labelled trials under `directory`, or exit 66 saying why there are none (65 for a
/// malformed `codes.csv`, naming its line).
func scanDataset(_ directory: String) throws -> Dataset {
    do {
        return try Dataset.scan(directory)
    } catch {
        printError(error.description)
        if case .badCodes = error { throw ExitStatus.dataError }
        throw ExitStatus.noInput
    }
}

func defaultThreads() -> Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

#if canImport(Glibc)
import Glibc
#endif
