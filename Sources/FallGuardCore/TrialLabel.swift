/// What a labelled recording's file name says: `<CODE>_<SUBJECT>_R<TRIAL>.csv`, where a CODE
/// starting with `F` is a fall trial and `D` an activity of daily living (ADL), as in SisFall.
public struct TrialLabel: Sendable, Hashable, Comparable {
    public enum Kind: String, Sendable, Codable { case fall, adl }

    public var code: String
    public var subject: String
    public var trial: Int
    public var kind: Kind

    /// Parses a file name such as `F05_SA01_R04.csv`; nil when it does not follow the scheme.
    public init?(fileName: String) {
        guard fileName.hasSuffix(".csv") else { return nil }
        let stem = fileName.dropLast(4)
        let parts = stem.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, let first = parts[0].first, parts[0].count >= 2,
              parts[0].dropFirst().allSatisfy(\.isNumber),
              !parts[1].isEmpty, parts[1].allSatisfy({ $0.isLetter || $0.isNumber }),
              parts[2].first == "R", let trial = Int(parts[2].dropFirst()) else { return nil }
        switch first {
        case "F": kind = .fall
        case "D": kind = .adl
        default: return nil
        }
        code = String(parts[0])
        subject = String(parts[1])
        self.trial = trial
    }

    public static func < (a: TrialLabel, b: TrialLabel) -> Bool {
        (a.subject, a.code, a.trial) < (b.subject, b.code, b.trial)
    }
}
