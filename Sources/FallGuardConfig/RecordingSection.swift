import FallGuardCore

/// `recording:` — what the bridge keeps of the signal for field tests: the continuous
/// recording (off by default) and the incident archive's window (always kept).
public struct RecordingSection: ConfigSection, Codable, Equatable {
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

    enum CodingKeys: String, CodingKey {
        case enabled, directory, keepGB = "keep-gb", flushInterval = "flush-interval"
        case incidentBefore = "incident-before", incidentAfter = "incident-after"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try c.value(.enabled, default: enabled)
        directory = try c.value(.directory, default: directory)
        keepGB = try c.value(.keepGB, default: keepGB)
        flushInterval = try c.value(.flushInterval, default: flushInterval)
        incidentBefore = try c.value(.incidentBefore, default: incidentBefore)
        incidentAfter = try c.value(.incidentAfter, default: incidentAfter)
    }

    /// The folder the recordings go to.
    public func folder(stateDirectory: String) -> String {
        directory.isEmpty ? stateDirectory + "/recordings" : directory
    }

    /// `keep-gb` in bytes.
    public var keepBytes: Int64 { Int64(keepGB * 1e9) }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        if !(0.01...10_000).contains(keepGB) {
            out.append(ConfigProblem(path + ["keep-gb"], "must be 0.01 to 10000 GB, found \(keepGB)"))
        }
        if !(1...10).contains(flushInterval) {
            out.append(ConfigProblem(path + ["flush-interval"], "must be 1 to 10 seconds (what a power cut may lose), found \(flushInterval)"))
        }
        for (key, v) in [("incident-before", incidentBefore), ("incident-after", incidentAfter)] where !(5...600).contains(v) {
            out.append(ConfigProblem(path + [key], "must be 5 to 600 seconds, found \(v)"))
        }
        if !directory.isEmpty {
            if !directory.hasPrefix("/") {
                out.append(ConfigProblem(path + ["directory"], "must be an absolute path, found '\(directory)'"))
            } else if !directory.hasPrefix(StateSection.defaultDirectory + "/") {
                out.append(ConfigProblem(path + ["directory"], "the systemd unit lets the service write only \(StateSection.defaultDirectory); add \(directory) to ReadWritePaths= in a drop-in", severity: .warning))
            }
        }
        return out
    }
}
