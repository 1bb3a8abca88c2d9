import FallGuardConfig
import FallGuardNotify
import Foundation
import Logging

/// Log lines for journald or a terminal, on standard error, with every known secret masked.
///
/// Under systemd (`JOURNAL_STREAM` set) each line starts with its syslog priority (`<3>` …),
/// which journald turns into the entry's priority and strips; metadata follow as `key=value`.
/// On a terminal the line starts with the time instead.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String
    let redactor: SecretRedactor
    let journal: Bool

    public init(label: String, level: Logger.Level, redactor: SecretRedactor,
         environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.label = label
        logLevel = level
        self.redactor = redactor
        journal = environment["JOURNAL_STREAM"] != nil
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let fields = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let text = redactor.redact("\(label): \(event.message)\(fields)")
            .replacingOccurrences(of: "\n", with: " ")
        let prefix = journal ? "<\(Self.priority(event.level))>" : Self.timestamp() + " " + event.level.rawValue.uppercased() + " "
        FileHandle.standardError.write(Data((prefix + text + "\n").utf8))
    }

    /// syslog(3) priorities.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var parts = tm()
        localtime_r(&t, &parts)
        return String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, ts.tv_nsec / 1_000_000)
    }
}
