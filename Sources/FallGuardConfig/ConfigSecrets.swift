import FallGuardConfigKeys
import FallGuardCore
import FallGuardNotify
import Foundation
import Yams

/// Where secrets come from besides the file itself: `${NAME}` references to the environment,
/// and a credentials file laid over the configuration.
enum ConfigSecrets {
    /// The top-level key naming the credentials file.
    static let credentialsFileKey = "credentials-file"

    /// Replaces every `${NAME}` in scalar values with the environment's value. Each value
    /// used joins `redactor`; an unset or empty variable is a problem at the key that
    /// refers to it.
    static func substituteEnvironment(in root: Node, environment: [String: String],
                                      redactor: inout SecretRedactor) -> (Node, [ConfigProblem]) {
        var problems: [ConfigProblem] = []
        var used: [String] = []
        let result = root.mappingLeaves { path, scalar in
            guard scalar.string.contains("${") else { return nil }
            let expanded = expand(scalar.string) { name in
                guard let v = environment[name], !v.isEmpty else {
                    let why = environment[name] == nil ? "is not set" : "is empty"
                    problems.append(ConfigProblem(path, "environment variable \(name) \(why)"))
                    return ""
                }
                used.append(v)
                return v
            } malformed: { text in
                problems.append(ConfigProblem(path, "'\(text)' is not a ${NAME} reference (NAME: letters, digits, _)"))
            }
            // Typed by its new text, as Yams types a scalar whose text changed (whatever its quotes).
            return Node.Scalar(expanded, YAMLTypes.tag(YAMLTypes.name(ofPlain: expanded)), scalar.style, scalar.mark)
        }
        used.forEach { redactor.add($0) }
        return (result, problems)
    }

    /// `text` with each `${NAME}` replaced by `lookup(NAME)`.
    static func expand(_ text: String, lookup: (String) -> String, malformed: (String) -> Void) -> String {
        var out = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                malformed(String(rest[start.lowerBound...]))
                return out + rest[start.lowerBound...]
            }
            let name = String(rest[start.upperBound..<end])
            if isVariableName(name) {
                out += lookup(name)
            } else {
                malformed("${\(name)}")
                out += rest[start.lowerBound...end]
            }
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }

    static func isVariableName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    /// Group and other permission bits of a file, or nil if it cannot be examined.
    static func permissions(of path: String) -> mode_t? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return st.st_mode & 0o777
    }

    /// The warning for a file holding secrets that others may read: any group or other bit set
    /// (`mask` 0o077, the credentials file must be 0600), or only other bits (0o007).
    static func modeWarning(_ path: String, key: [String], what: String, mask: mode_t = 0o077) -> ConfigProblem? {
        guard let mode = permissions(of: path), mode & mask != 0 else { return nil }
        let octal = String(mode, radix: 8)
        return ConfigProblem(key, "\(what) \(path) has mode 0\(octal): other users can read the secrets; run chmod 600 \(path)",
                             severity: .warning)
    }
}

extension SecretRedactor {
    /// Key names treated as secret wherever they appear, even when written in the file itself.
    static let secretKeyWords = ["password", "passwd", "token", "secret", "api-key", "apikey", "private-key"]

    /// Whether a key name looks like it holds a secret (`auth-token`, `smtp-password`, …).
    public static func isSecretKey(_ key: String) -> Bool {
        let k = key.lowercased()
        return secretKeyWords.contains { k.contains($0) }
    }
}
