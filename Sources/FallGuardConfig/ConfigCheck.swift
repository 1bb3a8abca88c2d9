import Foundation

/// Checks on single configuration values, named after what they check; each returns the
/// problem it finds.
enum ConfigCheck {
    /// `+` then 8 to 15 digits, the first not 0 (ITU-T E.164).
    static func isE164(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count >= 9, u.count <= 16, u[0] == UInt8(ascii: "+"), u[1] != UInt8(ascii: "0") else { return false }
        return u.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    static func phone(_ s: String, at path: [String]) -> [ConfigProblem] {
        isE164(s) ? [] : [ConfigProblem(path, "'\(s)' is not an E.164 phone number (e.g. +447700900123: '+', country code, number, no spaces)")]
    }

    /// An absolute http or https URL with a host.
    static func httpURL(_ s: String, at path: [String]) -> [ConfigProblem] {
        guard let u = URL(string: s), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = u.host, !host.isEmpty else {
            return [ConfigProblem(path, "'\(s)' is not an http:// or https:// URL")]
        }
        return []
    }

    static func credential(_ s: String, at path: [String]) -> [ConfigProblem] {
        s.trimmingCharacters(in: .whitespaces).isEmpty ? [ConfigProblem(path, "missing credential")] : []
    }

    static func required(_ s: String, at path: [String]) -> [ConfigProblem] {
        s.trimmingCharacters(in: .whitespaces).isEmpty ? [ConfigProblem(path, "must not be empty")] : []
    }

    static func seconds(_ v: Double, in range: ClosedRange<Double>, at path: [String]) -> [ConfigProblem] {
        v.isFinite && range.contains(v) ? [] :
            [ConfigProblem(path, "\(v) s is outside \(range.lowerBound)...\(range.upperBound) s")]
    }

    /// Plausible e-mail address: something@domain.
    static func email(_ s: String, at path: [String]) -> [ConfigProblem] {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        let ok = parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !s.contains(" ")
        return ok ? [] : [ConfigProblem(path, "'\(s)' is not an e-mail address")]
    }
}
