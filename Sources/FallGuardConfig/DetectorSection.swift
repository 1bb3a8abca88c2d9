import FallGuardConfigKeys
import FallGuardCore
import Foundation

/// `detector:` — which fall detector runs and its tuned settings (see `fallguard detectors`).
public struct DetectorSection: KeyedSection, Codable, Equatable {
    /// A name from ``DetectorCatalog`` (key `name`, default `multiphase`).
    public var name: String = DetectorCatalog.defaultName
    /// Settings over the detector's defaults, e.g. `impact: 1.75` (key `settings`, default none;
    /// also accepted as a list of `key=value` strings, as `--set` takes them).
    public var settings: [String: Double] = [:]

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.value("name", \.name), .custom("settings", \.settings) { c, k in
            if let list = try? c.decodeIfPresent([String].self, forKey: k) { return try parse(list, in: c, at: k) }
            return try c.decodeIfPresent([String: Double].self, forKey: k)
        }]
    }

    /// `["impact=1.75"]` as a mapping; a malformed item is a data error at `settings`.
    private static func parse(_ list: [String], in c: KeyedDecodingContainer<ConfigKeyName>, at key: ConfigKeyName) throws -> [String: Double] {
        var out: [String: Double] = [:]
        for item in list {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, let v = Double(parts[1]) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c,
                                                       debugDescription: "'\(item)' is not of the form key=number")
            }
            out[parts[0]] = v
        }
        return out
    }

    /// The detector to build; throws on an unknown name or setting (``problems(at:)`` lists them all).
    public func configuration() throws(DetectorSettingError) -> DetectorConfiguration {
        try DetectorConfiguration(name: name, values: settings)
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        guard DetectorNames.value(named: name) != nil,
              var defaults = try? DetectorSettings(parameters: DetectorCatalog.parameters(for: name)) else {
            return [ConfigProblem(Self.at(path, \.name), DetectorNames.mismatch(name))]
        }
        // Every bad setting named, each checked once against the same settings.
        return settings.keys.sorted().compactMap { key -> ConfigProblem? in
            do throws(DetectorSettingError) {
                try defaults.set(key, settings[key]!, detector: name)
                return nil
            } catch {
                return ConfigProblem(Self.at(path, \.settings) + [key], error.description)
            }
        }
    }
}

/// The words of `detector.name`: the catalog's detectors.
enum DetectorNames: WordList {
    static var words: [(word: String, value: String)] { DetectorCatalog.names.map { ($0, $0) } }
}
