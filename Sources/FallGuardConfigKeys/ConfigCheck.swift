import Foundation

/// Checks on single configuration values, named after what they check; each returns the
/// problem it finds.
package enum ConfigCheck {
    /// `+` then 8 to 15 digits, the first not 0 (ITU-T E.164).
    package static func isE164(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count >= 9, u.count <= 16, u[0] == UInt8(ascii: "+"), u[1] != UInt8(ascii: "0") else { return false }
        return u.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    package static func phone(_ s: String, at path: [String]) -> [ConfigProblem] {
        isE164(s) ? [] : [ConfigProblem(path, "'\(s)' is not an E.164 phone number (e.g. +447700900123: '+', country code, number, no spaces)")]
    }

    /// An absolute http or https URL with a host.
    package static func httpURL(_ s: String, at path: [String]) -> [ConfigProblem] {
        guard let u = URL(string: s), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = u.host, !host.isEmpty else {
            return [ConfigProblem(path, "'\(s)' is not an http:// or https:// URL")]
        }
        return []
    }

    package static func credential(_ s: String, at path: [String]) -> [ConfigProblem] {
        isBlank(s) ? [ConfigProblem(path, "missing credential")] : []
    }

    package static func required(_ s: String, at path: [String]) -> [ConfigProblem] {
        isBlank(s) ? [ConfigProblem(path, "must not be empty")] : []
    }

    /// Empty or only spaces and tabs (Foundation's `.whitespaces`, without its character-set
    /// tables: Unicode's space separators and the tab).
    static func isBlank(_ s: String) -> Bool {
        s.unicodeScalars.allSatisfy { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
    }

    package static func seconds(_ v: Double, in range: ClosedRange<Double>, at path: [String]) -> [ConfigProblem] {
        v.isFinite && range.contains(v) ? [] :
            [ConfigProblem(path, "\(v) s is outside \(range.lowerBound)...\(range.upperBound) s")]
    }

    /// Text that ends up in message headers, SMS and MQTT payloads (names, the device, header
    /// values): no control character, so no CR or LF can start a header of its own.
    package static func printable(_ s: String, at path: [String]) -> [ConfigProblem] {
        guard let c = s.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) else { return [] }
        let code = String(c.value, radix: 16, uppercase: true)
        return [ConfigProblem(path, "contains the control character U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code): it would reach headers and messages")]
    }

    /// `localhost`, `::1` or 127.x: traffic that never leaves the machine.
    package static func isLoopback(_ host: String) -> Bool {
        let h = String(host.lowercased().drop { $0 == "[" || $0 == "]" }.reversed().drop { $0 == "[" || $0 == "]" }.reversed())
        return h == "localhost" || h == "::1" || h.hasPrefix("127.")
    }

    /// Credentials (`what`) sent in clear to `host`: refused unless `allowed` (the channel's
    /// `allow-plaintext: true`), then a warning; nothing to say for a loopback host.
    package static func plaintext(_ what: String, to host: String, allowed: Bool, at path: [String]) -> [ConfigProblem] {
        guard !isLoopback(host) else { return [] }
        if allowed {
            return [ConfigProblem(path, "\(what) in clear text to \(host) (allowed by allow-plaintext)", severity: .warning)]
        }
        return [ConfigProblem(path, "would send \(what) in clear text to \(host): use TLS, or set allow-plaintext: true in this channel to accept it")]
    }

    /// Why this process cannot read `file` (the C library's words), nil when it can.
    package static func unreadable(_ file: String) -> String? {
        access(file, R_OK) == 0 ? nil : String(cString: strerror(errno))
    }
}
