import FallGuardCore

/// `log:` — how much the bridge says in the journal.
public struct LogSection: ConfigSection, Codable, Equatable {
    /// swift-log's levels, quietest last.
    public enum Level: String, CaseIterable, Sendable {
        case trace, debug, info, notice, warning, error, critical
    }

    /// Key `level`, default `info`.
    public var level: Level = .info

    public init() {}

    enum CodingKeys: String, CodingKey { case level }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        level = try c.word(RawWords<Level>.self, .level, default: level)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(level, as: RawWords<Level>.self, forKey: .level)
    }

    public func problems(at path: [String]) -> [ConfigProblem] { [] }
}
