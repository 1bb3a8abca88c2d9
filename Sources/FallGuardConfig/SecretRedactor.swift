import Foundation

/// Hides secret values (tokens, passwords, anything that came from `${ENV}` or the credentials
/// file) in any text before it reaches a terminal, a log or an alert.
public struct SecretRedactor: Sendable, Equatable {
    /// What a secret becomes.
    public static let mask = "‹redacted›"
    /// Key names treated as secret wherever they appear, even when written in the file itself.
    static let secretKeyWords = ["password", "passwd", "token", "secret", "api-key", "apikey", "private-key"]

    /// Longest first, so that a secret containing another is masked whole.
    public private(set) var secrets: [String]

    public init(secrets: [String] = []) {
        self.secrets = []
        secrets.forEach { add($0) }
    }

    /// Adds a value to hide. Values of one or two characters are ignored: masking every `1`
    /// in a log would hide more than it protects.
    public mutating func add(_ secret: String) {
        guard secret.count > 2, !secrets.contains(secret), !["true", "false", "null"].contains(secret) else { return }
        secrets.append(secret)
        secrets.sort { $0.count > $1.count }
    }

    /// `text` with every secret value replaced by ``mask``.
    public func redact(_ text: String) -> String {
        var out = text
        for s in secrets where out.contains(s) {
            out = out.replacingOccurrences(of: s, with: Self.mask)
        }
        return out
    }

    /// Whether a key name looks like it holds a secret (`auth-token`, `smtp-password`, …).
    public static func isSecretKey(_ key: String) -> Bool {
        let k = key.lowercased()
        return secretKeyWords.contains { k.contains($0) }
    }
}
