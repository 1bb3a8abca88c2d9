import FallGuardConfigKeys
import FallGuardCore

/// `log:` — how much the bridge says in the journal.
public struct LogSection: KeyedSection, Codable, Equatable {
    /// swift-log's levels, quietest last.
    public enum Level: String, CaseIterable, Sendable {
        case trace, debug, info, notice, warning, error, critical
    }

    /// Key `level`, default `info`.
    public var level: Level = .info

    public init() {}

    public static var keys: [ConfigKey<Self>] { [.word("level", \.level, RawWords<Level>.self)] }
}
