/// One problem found in the configuration: a bad value, a missing credential, an unknown key.
/// The loader turns ``keyPath`` into `file:line` for the person fixing it; start-up stops
/// (exit status 78) if any problem is an error.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable, Equatable { case error, warning }

    /// Where, from the top of the file: `["channels", "sms", "account-sid"]`; list items are
    /// their index as a string: `["contacts", "0", "phone"]`.
    public var keyPath: [String]
    public var message: String
    public var severity: Severity

    public init(_ keyPath: [String], _ message: String, severity: Severity = .error) {
        self.keyPath = keyPath
        self.message = message
        self.severity = severity
    }

    /// `channels.sms.account-sid`
    public var key: String { keyPath.joined(separator: ".") }

    public var description: String { "\(key): \(message)" }
}

/// A section of the configuration file. Sections are `Codable` with the file's kebab-case keys,
/// give every optional key its documented default when decoding, and encode back every key they
/// accept (the loader reports keys that do not survive a decode/encode round trip as unknown).
/// Checks that need more than a type (ranges, E.164 numbers, URLs, credentials present) go in
/// ``problems(at:)``.
public protocol ConfigSection: Codable, Sendable {
    /// Everything wrong with the values, each with its full key path (`path` is where this
    /// section sits in the file).
    func problems(at path: [String]) -> [ConfigProblem]
}
