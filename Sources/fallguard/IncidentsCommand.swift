import ArgumentParser
import FallGuardConfig
import FallGuardCore
import FallGuardFieldTest
import Foundation

extension IncidentLabel: ExpressibleByArgument {}

/// `--state DIR`: the incident archive of a state directory.
struct ArchiveOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The state directory (the archive is <dir>/incidents).", valueName: "dir"))
    var state = StateSection.defaultDirectory

    var archive: IncidentArchive { IncidentArchive(folder: IncidentArchive.folder(inState: state)) }
}

struct IncidentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "incidents",
        abstract: "List the incident archive: every suspected fall, help request and sensor fault, with its outcome and label.",
        discussion: """
            Each incident keeps <state>/incidents/<ID>/incident.json (detector and settings, \
            features, timeline, deliveries, outcome, labels) and signal.csv (the 40 Hz signal \
            around its event, a recording `replay`, `evaluate` and `report` read). Label them with \
            `fallguard label`; score new detector settings on them with `fallguard evaluate \
            <state>/incidents`.
            """)

    @OptionGroup var options: ArchiveOptions

    @Flag(help: "Print the records as one JSON array.")
    var json = false

    func run() throws {
        let (records, unreadable) = options.archive.records()
        for u in unreadable { printError(u) }
        if json {
            try printJSON(records)
            return
        }
        guard !records.isEmpty else {
            print("no incidents in \(options.archive.folder)")
            return
        }
        print(Self.table(records))
    }

    static func table(_ records: [IncidentRecord]) -> String {
        var rows = [["ID", "EVENT (UTC)", "KIND", "OUTCOME", "LABEL", "BY", "DETECTION"]]
        for r in records {
            let detection = r.detection.map { "\($0.detector): \($0.phases.joined(separator: "+")), peak \(fixedDecimal($0.peak, digits: 2)) g" } ?? ""
            rows.append([r.id, String(r.eventWallTime.prefix(19)) + r.clockMark, r.kind, r.outcome, r.label?.label.rawValue ?? "-",
                         r.label?.by ?? "", detection])
        }
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max()! }
        return rows.map { row in
            row.enumerated().map { c, v in c == row.count - 1 ? v : v.padding(toLength: widths[c], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

struct LabelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "label",
        abstract: "Say what an incident was: fall, no-fall or unsure (the history of labels is kept).",
        discussion: """
            Sets the label of <state>/incidents/<ID>; an earlier label, the wearer's own (an \
            aborted countdown is labelled no-fall by the wearer) included, stays in the history. \
            Run it as the daemon's user (sudo -u fallguard): the archive is health data, readable \
            by its owner only, and nothing is written in a folder another user owns (root too \
            is refused: the owner could plant links there).
            """)

    @Argument(help: "The incident, e.g. FG-12 (see `fallguard incidents`).")
    var id: String

    @Argument(help: "fall, no-fall or unsure.")
    var label: IncidentLabel

    @Option(help: "Why, in a few words.")
    var note: String?

    @Option(help: ArgumentHelp("Who says so (default: your login name).", valueName: "name"))
    var by: String?

    @OptionGroup var options: ArchiveOptions

    func run() throws {
        let archive = options.archive
        guard IncidentArchive.isValidID(id) else {
            printError("\(id.debugDescription): not an incident id (letters, digits, - _ . only; see `fallguard incidents --state \(options.state)`)")
            throw ExitStatus.usage
        }
        guard FileManager.default.fileExists(atPath: archive.recordPath(of: id)) else {
            printError("\(archive.recordPath(of: id)): no such incident (see `fallguard incidents --state \(options.state)`)")
            throw ExitStatus.noInput
        }
        let who = by ?? ProcessInfo.processInfo.environment["SUDO_USER"] ?? ProcessInfo.processInfo.userName
        let entry = IncidentLabelEntry(label: label, by: who, at: iso8601(secondsSince1970: Date().timeIntervalSince1970), note: note)
        let record: IncidentRecord
        do { record = try archive.label(id, entry) } catch {
            printError("\(archive.recordPath(of: id)): \(error)")
            throw ExitStatus.cantCreate
        }
        let history = record.labels.map { "\($0.label.rawValue) by \($0.by) at \($0.at)" }
        print("\(id): \(label.rawValue) (history: \(history.joined(separator: "; ")))")
    }
}
