import FallGuardCore
import Foundation

/// One labelled recording of a dataset.
public struct LabelledTrial: Sendable, Hashable {
    public var path: String
    public var label: TrialLabel

    public init(path: String, label: TrialLabel) { (self.path, self.label) = (path, label) }
}

/// A folder tree of `<CODE>_<SUBJECT>_R<TRIAL>.csv` recordings (`F…` falls, `D…` ADLs), and of
/// continuous recordings with a labels sidecar (`<name>.labels.csv`), scored by events. Either
/// may be gzip (`.csv.gz`).
public struct Dataset: Sendable {
    public var root: String
    public var trials: [LabelledTrial]
    /// Recordings with a labels sidecar (any name), scored by events.
    public var recordings: [String] = []
    /// `.csv` files whose names do not follow the scheme and that have no sidecar (listed, not scored).
    public var unlabelled: [String]
    /// What each activity code means, for the reports: the folder's own `codes.csv`, else
    /// SisFall's table when every subject is named as SisFall's are (`SA01`, `SE06`), else none.
    public var codeNames: [String: String] = [:]

    public init(root: String, trials: [LabelledTrial], recordings: [String] = [], unlabelled: [String] = [],
                codeNames: [String: String] = [:]) {
        (self.root, self.trials, self.recordings, self.unlabelled) = (root, trials, recordings, unlabelled)
        self.codeNames = codeNames
    }

    /// The file of a folder's own activity names: `code,activity` per line (a header line
    /// `code,activity` and `#` comments allowed), e.g. `F35,fall sliding down a wall (syncope)`.
    public static let codesFile = "codes.csv"

    public enum ScanError: Error, CustomStringConvertible {
        case notADirectory(String)
        case noTrials(String, unlabelled: Int)
        case badCodes(String, line: Int, text: String)

        public var description: String {
            switch self {
            case .notADirectory(let p): return "\(p): not a readable directory"
            case let .badCodes(p, line, text):
                return "\(p):\(line): '\(text)' is not of the form CODE,ACTIVITY (e.g. F01,forward fall while walking)"
            case .noTrials(let p, let n):
                return "\(p): no labelled trials (<CODE>_<SUBJECT>_R<TRIAL>.csv with CODE F… or D…) and no recordings with a <name>.labels.csv"
                    + (n > 0 ? "; \(n) .csv files have other names and no labels" : "")
            }
        }
    }

    /// Finds every labelled recording below `root`, sorted by subject, code and trial.
    public static func scan(_ root: String) throws(ScanError) -> Dataset {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir), isDir.boolValue,
              let walker = FileManager.default.enumerator(atPath: root) else { throw .notADirectory(root) }
        var trials: [LabelledTrial] = []
        var unlabelled: [String] = []
        let base = root.hasSuffix("/") ? root : root + "/"
        var recordings: [String] = []
        while let rel = walker.nextObject() as? String {
            guard rel.hasSuffix(".csv") || rel.hasSuffix(".csv.gz"), !rel.hasSuffix(LabelsFile.suffix) else { continue }
            let name = rel.split(separator: "/").last.map(String.init) ?? rel
            if let label = TrialLabel(fileName: name.hasSuffix(".gz") ? String(name.dropLast(3)) : name) {
                trials.append(LabelledTrial(path: base + rel, label: label))
            } else if FileManager.default.fileExists(atPath: LabelsFile.sidecar(of: base + rel)) {
                recordings.append(base + rel)
            } else {
                unlabelled.append(base + rel)
            }
        }
        guard !trials.isEmpty || !recordings.isEmpty else { throw .noTrials(root, unlabelled: unlabelled.count) }
        trials.sort { ($0.label, $0.path) < ($1.label, $1.path) }
        let names: [String: String]
        if let text = try? String(contentsOfFile: base + codesFile, encoding: .utf8) {
            names = try codeNames(text, path: base + codesFile)
        } else if trials.allSatisfy({ ActivityCodes.isSisFallSubject($0.label.subject) }) {
            names = ActivityCodes.descriptions
        } else {
            names = [:]
        }
        return Dataset(root: root, trials: trials, recordings: recordings.sorted(), unlabelled: unlabelled.sorted(), codeNames: names)
    }

    /// The lines of a `codes.csv`.
    static func codeNames(_ text: String, path: String) throws(ScanError) -> [String: String] {
        var names: [String: String] = [:]
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard let comma = line.firstIndex(of: ",") else { throw .badCodes(path, line: i + 1, text: String(line.prefix(80))) }
            let code = line[..<comma].trimmingCharacters(in: .whitespaces)
            let activity = line[line.index(after: comma)...].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if i == 0 && code.lowercased() == "code" { continue }
            guard !code.isEmpty, !activity.isEmpty else { throw .badCodes(path, line: i + 1, text: String(line.prefix(80))) }
            names[code] = activity
        }
        return names
    }
}

/// SisFall's activity codes, for readable reports (Sucerquia et al., Sensors 17(1):198, 2017):
/// the names of a folder whose subjects are SisFall's and that has no `codes.csv` of its own.
public enum ActivityCodes {
    /// SisFall names its people `SA01`-`SA23` (adults) and `SE01`-`SE15` (older people).
    public static func isSisFallSubject(_ subject: String) -> Bool {
        let u = Array(subject.utf8)
        return u.count == 4 && u[0] == UInt8(ascii: "S") && (u[1] == UInt8(ascii: "A") || u[1] == UInt8(ascii: "E"))
            && u[2...].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    public static let descriptions: [String: String] = [
        "D01": "walk slowly", "D02": "walk quickly", "D03": "jog slowly", "D04": "jog quickly",
        "D05": "stairs up and down slowly", "D06": "stairs up and down quickly",
        "D07": "sit in half-height chair slowly", "D08": "sit in half-height chair quickly",
        "D09": "sit in low chair slowly", "D10": "sit in low chair quickly",
        "D11": "collapse into a chair trying to get up", "D12": "sit then lie down slowly",
        "D13": "sit then lie down quickly", "D14": "turn from back to side lying",
        "D15": "bend at knees", "D16": "bend without bending knees", "D17": "get in and out of a car",
        "D18": "stumble while walking", "D19": "gentle jump",
        "F01": "forward slip walking", "F02": "backward slip walking", "F03": "lateral slip walking",
        "F04": "forward trip walking", "F05": "forward trip jogging", "F06": "vertical fall fainting",
        "F07": "fainting, hands on a table", "F08": "forward fall getting up", "F09": "lateral fall getting up",
        "F10": "forward fall sitting down", "F11": "backward fall sitting down", "F12": "lateral fall sitting down",
        "F13": "forward fall while sitting", "F14": "backward fall while sitting", "F15": "lateral fall while sitting",
    ]
}
