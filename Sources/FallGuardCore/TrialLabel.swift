/// What a labelled recording's file name says: `<CODE>_<SUBJECT>_R<TRIAL>.csv`.
///
/// The subject and the trial are the last two fields; the CODE is everything before them and may
/// itself contain underscores. A CODE starting with `F` is a fall trial and `D` an activity of
/// daily living (ADL), followed by letters or digits: SisFall's `F05` and `D11`, UMAFall's
/// `FforwardFall` and `DSitting_GettingUpOnAChair`, or a field tester's own `F1stairs`.
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
        guard parts.count >= 3 else { return nil }
        let subjectPart = parts[parts.count - 2], trialPart = parts[parts.count - 1]
        let codeParts = parts[..<(parts.count - 2)]
        guard !subjectPart.isEmpty, subjectPart.allSatisfy(Self.isNameCharacter),
              trialPart.first == "R", trialPart.count >= 2, trialPart.dropFirst().allSatisfy(Self.isDigit),
              let trial = Int(trialPart.dropFirst()),
              let first = codeParts.first?.first, codeParts[codeParts.startIndex].count >= 2,
              codeParts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isNameCharacter) }) else { return nil }
        switch first {
        case "F": kind = .fall
        case "D": kind = .adl
        default: return nil
        }
        code = codeParts.joined(separator: "_")
        subject = String(subjectPart)
        self.trial = trial
    }

    private static func isDigit(_ c: Character) -> Bool { c >= "0" && c <= "9" }
    private static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber)
    }

    public static func < (a: TrialLabel, b: TrialLabel) -> Bool {
        (a.subject, a.code, a.trial) < (b.subject, b.code, b.trial)
    }
}
