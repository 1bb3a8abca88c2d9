import Foundation

/// Hides secret values (tokens, passwords, webhook ids, anything that came from `${ENV}` or the
/// credentials file) in any text before it leaves the process: a log line, a delivery's error
/// or receipt in the outbox, what `test-alert` prints. The configuration module says which
/// values are secret; this type is the one place that hides them.
public struct SecretRedactor: Sendable, Equatable {
    /// What a secret becomes.
    public static let mask = "‹redacted›"
    /// Secrets shorter than this are hidden only where they stand alone (between characters
    /// that are not letters or digits): a 2-character password is hidden in `pass=ab`, and
    /// `ab` in `table` is left alone.
    public static let shortLength = 6

    /// Longest first, so that a secret containing another is masked whole.
    public private(set) var secrets: [String]

    public init(secrets: [String] = []) {
        self.secrets = []
        add(contentsOf: secrets)
    }

    /// Adds a value to hide, and its percent-encoded forms where they differ (a password in a
    /// URL an error message quotes, encoded as a URL's user part, query or a form encodes it).
    /// Empty values and the YAML words `true`, `false`, `null` are not secrets.
    public mutating func add(_ secret: String) {
        guard !secret.isEmpty, !["true", "false", "null", "~"].contains(secret) else { return }
        let encodings: [CharacterSet] = [.alphanumerics, .urlPasswordAllowed, .urlQueryAllowed]
        for form in [secret] + encodings.compactMap({ secret.addingPercentEncoding(withAllowedCharacters: $0) })
        where !secrets.contains(form) {
            secrets.append(form)
        }
        secrets.sort { $0.count > $1.count }
    }

    public mutating func add(contentsOf secrets: [String]) { secrets.forEach { add($0) } }

    /// `text` with every secret value replaced by ``mask``.
    public func redact(_ text: String) -> String {
        var out = text
        for s in secrets where out.contains(s) {
            out = s.count >= Self.shortLength ? out.replacingOccurrences(of: s, with: Self.mask) : Self.maskingWholeWords(s, in: out)
        }
        return out
    }

    /// The parts of a URL that are secret by nature: the password of `https://user:pass@host`
    /// (and `user:pass`), and with `path`, the last path segment (a Home Assistant webhook id,
    /// an ntfy topic, a Slack or Discord token) and every query value.
    public static func secrets(inURL text: String, path: Bool) -> [String] {
        guard let url = URLComponents(string: text), url.host != nil else { return [] }
        var found: [String] = []
        if let password = url.password, !password.isEmpty {
            found += [password, (url.user ?? "") + ":" + password]
        }
        guard path else { return found }
        if let last = url.path.split(separator: "/").last { found.append(String(last)) }
        found += (url.queryItems ?? []).compactMap(\.value)
        return found
    }

    private static func maskingWholeWords(_ secret: String, in text: String) -> String {
        var out = ""
        var rest = text[...]
        while let r = rest.range(of: secret) {
            let before = r.lowerBound == rest.startIndex ? out.last : rest[rest.index(before: r.lowerBound)]
            let after = r.upperBound < rest.endIndex ? rest[r.upperBound] : nil
            let alone = !(before.map(isWordCharacter) ?? false) && !(after.map(isWordCharacter) ?? false)
            out += rest[..<r.lowerBound] + (alone ? mask : secret)
            rest = rest[r.upperBound...]
        }
        return out + rest
    }

    private static func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber }
}
