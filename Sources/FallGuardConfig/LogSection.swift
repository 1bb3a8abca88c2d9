import FallGuardCore

/// `log:` — how much the bridge says in the journal.
public struct LogSection: ConfigSection, Codable, Equatable {
    /// swift-log's levels, quietest last.
    public enum Level: String, ConfigChoice {
        case trace, debug, info, notice, warning, error, critical
    }

    /// Key `level`, default `info`.
    public var level: Level = .info

    public init() {}

    enum CodingKeys: String, CodingKey { case level }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        level = try c.value(.level, default: level)
    }

    public func problems(at path: [String]) -> [ConfigProblem] { [] }
}
