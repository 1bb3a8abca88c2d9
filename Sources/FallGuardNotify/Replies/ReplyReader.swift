/// Reads a contact's SMS reply: does it acknowledge the open incident? Pure.
///
/// A reply acknowledges when every word of it is an acknowledgement word (`ok`, `yes`,
/// `coming`, `1` by default, any case), or it is one of the configured phrases, once the open
/// incident's id is set aside: "OK", "yes, coming!", "1", "ok FG-12". Anything else ("not ok",
/// "ok but I can't come", "who is this?") is kept with the incident and acknowledges nothing:
/// an acknowledgement stops escalation, so a doubtful one must not. A reply that names another
/// incident of the same bridge ("ok FG-11") never acknowledges this one.
public struct ReplyReader: Sendable, Equatable {
    /// Lower-case words and phrases.
    public var words: [String]

    public static let defaultWords = ["ok", "yes", "coming", "1"]

    public init(words: [String] = ReplyReader.defaultWords) {
        self.words = words.map { Self.normalised($0).joined(separator: " ") }.filter { !$0.isEmpty }
    }

    public enum Meaning: String, Sendable, Equatable {
        case acknowledges = "acknowledged"
        case other
        /// Names another incident than the open one.
        case otherIncident = "other-incident"
    }

    /// What `body` means for `incident` (an id like `FG-12`).
    public func read(_ body: String, for incident: String) -> Meaning {
        let own = Self.normalised(incident).joined(separator: "-")
        let prefix = incident.split(separator: "-").dropLast().joined(separator: "-").lowercased()
        var rest: [String] = []
        let tokens = Self.normalised(body)
        var i = 0
        // Incident ids are `<prefix>-<n>`: the words split at the hyphen come back together here.
        while i < tokens.count {
            if !prefix.isEmpty, i + 1 < tokens.count, tokens[i] == prefix, tokens[i + 1].allSatisfy(\.isNumber) {
                if "\(tokens[i])-\(tokens[i + 1])" != own { return .otherIncident }
                i += 2
                continue
            }
            rest.append(tokens[i])
            i += 1
        }
        guard !rest.isEmpty else { return .other }
        if words.contains(rest.joined(separator: " ")) { return .acknowledges }
        return rest.allSatisfy { words.contains($0) } ? .acknowledges : .other
    }

    /// Lower-case words: letters and digits, split at everything else.
    static func normalised(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }
}
