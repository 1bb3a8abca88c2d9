import FallGuardCore

/// `state:` — where the bridge keeps what must survive a restart (the outbox, the last incident).
public struct StateSection: ConfigSection, Codable, Equatable {
    /// The directory systemd creates for the unit (`StateDirectory=fallguard`).
    public static let defaultDirectory = "/var/lib/fallguard"

    /// Key `directory`, default `/var/lib/fallguard`.
    public var directory: String = Self.defaultDirectory

    public init() {}

    enum CodingKeys: String, CodingKey { case directory }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        directory = try c.value(.directory, default: directory)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        let key = path + ["directory"]
        guard directory.hasPrefix("/") else { return [ConfigProblem(key, "must be an absolute path, found '\(directory)'")] }
        guard directory == Self.defaultDirectory else {
            return [ConfigProblem(key, "the systemd unit lets the service write only \(Self.defaultDirectory); add \(directory) to ReadWritePaths= in a drop-in", severity: .warning)]
        }
        return []
    }
}
