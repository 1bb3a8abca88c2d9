import ArgumentParser
import FallGuardCore
import FallGuardFieldTest

struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Score a detector on a labelled dataset: sensitivity, specificity, false alarms per hour, delay.",
        discussion: """
            DIR is a folder tree of recordings named <CODE>_<SUBJECT>_R<TRIAL>.csv, where CODE starts \
            with F for a fall trial (it must be detected) or D for an activity of daily living (it must \
            not raise an alarm), as in the SisFall dataset. Scores are per trial: a fall trial counts \
            as detected if the detector fires at least once; an ADL trial counts as a false alarm if it \
            fires at all. Delay is measured from the largest acceleration in a fall trial to the decision.

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

    @Option(help: "Worker threads (default: one per core).")
    var threads: Int = defaultThreads()

    func run() throws {
        let configuration = try detectorOptions.configuration()
        let dataset = try scanDataset(directory)
        let evaluation: Evaluation
        do {
            evaluation = try Evaluator.evaluate(dataset, configuration: configuration, skipBad: skipBad, threads: threads)
        } catch {
            printError(error.description + " (use --skip-bad to score the other files)")
            throw ExitStatus.dataError
        }
        if evaluation.outcomes.isEmpty {
            printError("\(directory): none of the \(dataset.trials.count) trials could be read")
            throw ExitStatus.dataError
        }
        let summary = EvaluationSummary(evaluation, configuration: configuration, dataset: directory, includeTrials: trials)
        print(json ? summary.json() : summary.text(), terminator: json ? "\n" : "")
    }
}

/// The labelled trials under `directory`, or exit 66 saying why there are none.
func scanDataset(_ directory: String) throws -> Dataset {
    do {
        return try Dataset.scan(directory)
    } catch {
        printError(error.description)
        throw ExitStatus.noInput
    }
}

func defaultThreads() -> Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

#if canImport(Glibc)
import Glibc
#endif
