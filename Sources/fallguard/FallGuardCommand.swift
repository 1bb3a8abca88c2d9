import ArgumentParser
import FallGuardDaemon
import FallGuardCore
import FallGuardFieldTest

struct FallGuardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fallguard",
        abstract: "Fall-detection sensor bridge: accelerometer in, buzzer and alerts out.",
        discussion: """
            `fallguard run` with no --config runs the no-hardware demo.
            """,
        version: fallguardVersion,
        groupedSubcommands: [
            CommandGroup(name: "The daemon", subcommands: [
                RunCommand.self, SetupCommand.self, CheckConfigCommand.self, StatusCommand.self, TestAlertCommand.self, OutboxRunCommand.self,
                StationCommand.self,
            ]),
            CommandGroup(name: "Bring-up", subcommands: [
                DevicesCommand.self, WatchCommand.self, RecordCommand.self, GPIOCommand.self, AlarmCommand.self, PowerCommand.self,
            ]),
            CommandGroup(name: "Field testing", subcommands: [
                ReplayCommand.self, EvaluateCommand.self, ReportCommand.self, CrossValidateCommand.self, DetectorsCommand.self,
                IncidentsCommand.self, LabelCommand.self,
            ]),
        ]
    )
}

/// `--detector NAME` and `--set key=value`, shared by the field-test commands.
struct DetectorOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Detector: \(DetectorCatalog.names.joined(separator: ", ")) (see `fallguard detectors`).",
        valueName: "name"))
    var detector: String = DetectorCatalog.defaultName

    @Option(name: .customLong("set"), help: ArgumentHelp(
        "Override one detector setting, e.g. --set impact=3.0 (repeatable; `fallguard detectors` lists the keys).",
        valueName: "key=value"))
    var assignments: [String] = []

    @Flag(help: "Feed the detector the accelerometer only: a six-axis recording's gyroscope columns are ignored.")
    var accelerometerOnly = false

    func configuration() throws -> DetectorConfiguration {
        do {
            var configuration = try DetectorConfiguration(name: detector, assignments: assignments)
            configuration.accelerometerOnly = accelerometerOnly
            return configuration
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// `--threads`, shared by the commands that judge a folder.
struct ThreadsOption: ParsableArguments {
    @Option(help: "Worker threads (default: one per core).")
    var threads: Int = defaultThreads()

    func validate() throws {
        guard (1...256).contains(threads) else { throw ValidationError("--threads must be 1 to 256") }
    }
}

/// `--tolerance`, shared by `evaluate` and `report`.
struct ToleranceOption: ParsableArguments {
    @Option(help: "Seconds between a labelled fall and a detection's impact for it to count (events and the incident archive).")
    var tolerance: Double = EventEvaluator.defaultTolerance

    func validate() throws {
        guard (0.1...60).contains(tolerance) else { throw ValidationError("--tolerance must be 0.1 to 60 seconds") }
    }
}

/// sysexits.h codes, so scripts and systemd can tell failures apart.
enum ExitStatus {
    static let usage = ExitCode(64)          // EX_USAGE: a malformed argument
    static let dataError = ExitCode(65)      // EX_DATAERR: malformed input file
    static let noInput = ExitCode(66)        // EX_NOINPUT: missing file or empty dataset
    static let configError = ExitCode(78)    // EX_CONFIG: malformed configuration
    static let cantCreate = ExitCode(73)     // EX_CANTCREAT: cannot create an output file
}

/// Writes a line to standard error.
func printError(_ message: String) {
    var stderr = StandardError()
    print("fallguard: \(message)", to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleStderr.write(string)
    }
}
