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

    public init(root: String, trials: [LabelledTrial], recordings: [String] = [], unlabelled: [String] = []) {
        (self.root, self.trials, self.recordings, self.unlabelled) = (root, trials, recordings, unlabelled)
    }

    public enum ScanError: Error, CustomStringConvertible {
        case notADirectory(String)
        case noTrials(String, unlabelled: Int)

        public var description: String {
            switch self {
            case .notADirectory(let p): return "\(p): not a readable directory"
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
        return Dataset(root: root, trials: trials, recordings: recordings.sorted(), unlabelled: unlabelled.sorted())
    }
}

/// SisFall's activity codes, for readable reports (Sucerquia et al., Sensors 17(1):198, 2017).
public enum ActivityCodes {
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
