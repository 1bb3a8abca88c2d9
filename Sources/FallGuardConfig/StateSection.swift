import FallGuardConfigKeys
import FallGuardCore

/// `state:` — where the bridge keeps what must survive a restart (the outbox, the last incident).
public struct StateSection: KeyedSection, Codable, Equatable {
    /// The directory systemd creates for the unit (`StateDirectory=fallguard`).
    public static let defaultDirectory = "/var/lib/fallguard"

    /// Key `directory`, default `/var/lib/fallguard`.
    public var directory: String = Self.defaultDirectory
    /// Key `drain-on-stop`, default 10: seconds a stop (`systemctl stop`, an upgrade) waits for
    /// pending alerts to go out before it leaves them in the outbox for the next start. Below
    /// the unit's `TimeoutStopSec=15s`, with room for the rest of the shutdown.
    public var drainOnStop: Double = 10
    /// The most `drain-on-stop` may be: `TimeoutStopSec=` less what the rest of a stop takes.
    public static let longestDrain = 12.0

    public init() {}

    public static var keys: [ConfigKey<Self>] { [.value("directory", \.directory), .value("drain-on-stop", \.drainOnStop)] }

    public func checks(at path: [String]) -> [ConfigProblem] {
        guard (0...Self.longestDrain).contains(drainOnStop) else {
            return [ConfigProblem(Self.at(path, \.drainOnStop), "must be 0 to \(Int(Self.longestDrain)) seconds (below the unit's TimeoutStopSec=15s), found \(drainOnStop)")]
        }
        let key = Self.at(path, \.directory)
        guard directory.hasPrefix("/") else { return [ConfigProblem(key, "must be an absolute path, found '\(directory)'")] }
        guard directory == Self.defaultDirectory else {
            return [ConfigProblem(key, "the systemd unit lets the service write only \(Self.defaultDirectory); add \(directory) to ReadWritePaths= in a drop-in", severity: .warning)]
        }
        return []
    }
}
