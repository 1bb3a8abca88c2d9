import FallGuardCore
import Foundation

/// Hides secret values (tokens, passwords, webhook ids, anything that came from `${ENV}` or the
/// credentials file) in any text before it leaves the process: a log line, a delivery's error
/// or receipt in the outbox, what `test-alert` prints. The configuration module says which
/// values are secret; this type is the one place that hides them.
public struct SecretRedactor: Sendable, Equatable {
    /// What a secret becomes.
    public static let mask = "‹redacted›"
    /// Secrets shorter than this are hidden only where they stand as a value: after `=`, `:`
    /// (with at most one space) or a quote, and followed by no letter or digit. A 4-character
    /// password `mqtt` is hidden in `pass=mqtt` and `user:mqtt@host`, while the logger label
    /// `fallguard.mqtt`, a URL's `mqtt://` and `table` keep their words.
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
        let encodings: [(Unicode.Scalar) -> Bool] = [Self.isAlphanumeric, Self.urlPasswordAllowed, Self.urlQueryAllowed]
        for form in [secret] + encodings.map({ percentEncoded(secret, keeping: $0) }) where !secrets.contains(form) {
            secrets.append(form)
        }
        secrets.sort { $0.count > $1.count }
    }

    public mutating func add(contentsOf secrets: [String]) { secrets.forEach { add($0) } }

    // The forms Foundation's `addingPercentEncoding(withAllowedCharacters:)` gives with these
    // sets (`PercentEncodingTests` compares them), through FallGuardCore's `percentEncoded`.

    /// `CharacterSet.alphanumerics`: Unicode's letters, marks and numbers (L*, M*, N*).
    static func isAlphanumeric(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber: true
        default: false
        }
    }

    private static func isUnreservedOrSubDelimiter(_ s: Unicode.Scalar) -> Bool {
        isURLUnreserved(s) || "!$&'()*+,;=".unicodeScalars.contains(s)
    }

    /// `CharacterSet.urlPasswordAllowed`: RFC 3986's unreserved characters and sub-delimiters.
    static func urlPasswordAllowed(_ s: Unicode.Scalar) -> Bool { isUnreservedOrSubDelimiter(s) }

    /// `CharacterSet.urlQueryAllowed`: those, `:`, `@`, `/` and `?`.
    static func urlQueryAllowed(_ s: Unicode.Scalar) -> Bool { isUnreservedOrSubDelimiter(s) || ":@/?".unicodeScalars.contains(s) }

    /// `text` with every secret value replaced by ``mask``.
    public func redact(_ text: String) -> String {
        var out = text
        for s in secrets where out.contains(s) {
            out = s.count >= Self.shortLength ? out.replacingOccurrences(of: s, with: Self.mask) : Self.maskingWholeWords(s, in: out)
        }
        return out
    }

    /// The parts of a URL that are secret by nature: the password of `https://user:pass@host`
    /// (and `user:pass`), or a user name standing alone (`https://TOKEN@host`); with `path`,
    /// every path segment that is not a plain word (`bot123456:AAH…` in a Telegram URL, Slack's
    /// `T000/B000/XXXX`, Discord's `123/token`: a letter-only segment such as `api` or
    /// `webhook` names a route, not a key), the last segment whatever it is (a Home Assistant
    /// webhook id, an ntfy topic: whoever knows it can post), every query value and the fragment.
    public static func secrets(inURL text: String, path: Bool) -> [String] {
        guard let url = URLComponents(string: text), url.host != nil else { return [] }
        var found: [String] = []
        if let password = url.password, !password.isEmpty {
            found += [password, (url.user ?? "") + ":" + password]
        } else if let user = url.user, !user.isEmpty {
            found.append(user)
        }
        guard path else { return found }
        let segments = url.path.split(separator: "/").map(String.init)
        for (i, segment) in segments.enumerated() where i == segments.count - 1 || !isPlainWord(segment) {
            found.append(segment)
        }
        found += (url.queryItems ?? []).compactMap(\.value).filter { !$0.isEmpty }
        if let fragment = url.fragment, !fragment.isEmpty { found.append(fragment) }
        return found
    }

    /// A route's name in a URL path: ASCII letters, `-`, `_` and `.` only, at most 24 of them.
    static func isPlainWord(_ segment: String) -> Bool {
        segment.count <= 24 && segment.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "-" || $0 == "_" || $0 == "."
        }
    }

    private static func maskingWholeWords(_ secret: String, in text: String) -> String {
        guard text != secret else { return mask }
        var out = ""
        var rest = text[...]
        while let r = rest.range(of: secret) {
            let before = out + rest[..<r.lowerBound]
            let after = r.upperBound < rest.endIndex ? rest[r.upperBound] : nil
            let asValue = standsAsValue(after: before) && !(after.map(isWordCharacter) ?? false)
            out += rest[..<r.lowerBound] + (asValue ? mask : secret)
            rest = rest[r.upperBound...]
        }
        return out + rest
    }

    /// Whether what comes before a match ends as a value's introduction: `=`, `:` (each
    /// perhaps followed by one space) or a quote.
    private static func standsAsValue(after before: String) -> Bool {
        var tail = before.suffix(2)
        if tail.last == " " { tail = tail.dropLast() }
        guard let c = tail.last else { return false }
        return c == "=" || c == ":" || c == "\"" || c == "'"
    }

    private static func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber }
}
