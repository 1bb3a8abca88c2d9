import FallGuardConfigKeys
import FallGuardCore

/// `recording:` — what the bridge keeps of the signal for field tests: the continuous
/// recording (off by default) and the incident archive's window (always kept).
public struct RecordingSection: KeyedSection, Codable, Equatable {
    /// Key `enabled`, default false: write the 40 Hz stream the detector sees into hourly
    /// compressed files while monitoring.
    public var enabled = false
    /// Key `directory`, default empty: `<state.directory>/recordings`.
    public var directory = ""
    /// Key `keep-gb`, default 2: the most the recordings may take; the oldest files are
    /// deleted first (about 30 MB a day at most).
    public var keepGB = 2.0
    /// Key `flush-interval`, default 5: seconds between syncs to disk, 1 to 10 (what a power
    /// cut may lose).
    public var flushInterval = 5.0
    /// Keys `incident-before` and `incident-after`, default 60: seconds of signal each incident
    /// keeps before and after its event (`<state>/incidents/<ID>/signal.csv`), 5 to 600.
    public var incidentBefore = 60.0
    public var incidentAfter = 60.0

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.value("enabled", \.enabled), .value("directory", \.directory),
         .value("keep-gb", \.keepGB, in: 0.01...10_000, unit: " GB"), .value("flush-interval", \.flushInterval, in: 1...10, unit: " s"),
         .value("incident-before", \.incidentBefore, in: 5...600, unit: " s"), .value("incident-after", \.incidentAfter, in: 5...600, unit: " s")]
    }

    /// The folder the recordings go to.
    public func folder(stateDirectory: String) -> String {
        directory.isEmpty ? stateDirectory + "/recordings" : directory
    }

    /// `keep-gb` in bytes.
    public var keepBytes: Int64 { Int64(keepGB * 1e9) }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        if !directory.isEmpty {
            if !directory.hasPrefix("/") {
                out.append(ConfigProblem(Self.at(path, \.directory), "must be an absolute path, found '\(directory)'"))
            } else if !directory.hasPrefix(StateSection.defaultDirectory + "/") {
                out.append(ConfigProblem(Self.at(path, \.directory), "the systemd unit lets the service write only \(StateSection.defaultDirectory); add \(directory) to ReadWritePaths= in a drop-in", severity: .warning))
            }
        }
        return out
    }
}
