import FallGuardConfigKeys
import FallGuardCore
import FallGuardNotify

/// A ``ConfigProblem`` placed in a file: what `fallguard check-config` prints and what stops
/// start-up. Reads `FILE:LINE: key.path: message` (warnings: `FILE:LINE: warning: key.path: message`).
public struct ConfigDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// The file the problem is in (the configuration or the credentials file).
    public var file: String
    /// 1-based line, when the problem can be placed.
    public var line: Int?
    /// 1-based column, given for YAML syntax errors.
    public var column: Int?
    public var problem: ConfigProblem

    public init(file: String, line: Int?, column: Int? = nil, problem: ConfigProblem) {
        (self.file, self.line, self.column, self.problem) = (file, line, column, problem)
    }

    public var isError: Bool { problem.severity == .error }

    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        let severity = problem.severity == .warning ? "warning: " : ""
        let key = problem.keyPath.isEmpty ? "" : "\(problem.key): "
        return "\(place): \(severity)\(key)\(problem.message)"
    }
}

extension [ConfigDiagnostic] {
    /// The same diagnostics with every secret `redactor` knows masked in their messages.
    public func redacted(by redactor: SecretRedactor) -> [ConfigDiagnostic] {
        map { d in var d = d; d.problem.message = redactor.redact(d.problem.message); return d }
    }
}
