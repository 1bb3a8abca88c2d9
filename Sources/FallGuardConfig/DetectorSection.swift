import FallGuardCore
import Foundation

/// `detector:` — which fall detector runs and its tuned settings (see `fallguard detectors`).
public struct DetectorSection: ConfigSection, Codable, Equatable {
    /// A name from ``DetectorCatalog`` (key `name`, default `multiphase`).
    public var name: String = DetectorCatalog.defaultName
    /// Settings over the detector's defaults, e.g. `impact: 1.75` (key `settings`, default none;
    /// also accepted as a list of `key=value` strings, as `--set` takes them).
    public var settings: [String: Double] = [:]

    public init() {}

    enum CodingKeys: String, CodingKey { case name, settings }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.value(.name, default: name)
        if let list = try? c.decodeIfPresent([String].self, forKey: .settings) {
            settings = try Self.parse(list, in: c)
        } else {
            settings = try c.value(.settings, default: settings)
        }
    }

    /// `["impact=1.75"]` as a mapping; a malformed item is a data error at `settings`.
    private static func parse(_ list: [String], in c: KeyedDecodingContainer<CodingKeys>) throws -> [String: Double] {
        var out: [String: Double] = [:]
        for item in list {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, let v = Double(parts[1]) else {
                throw DecodingError.dataCorruptedError(forKey: .settings, in: c,
                                                       debugDescription: "'\(item)' is not of the form key=number")
            }
            out[parts[0]] = v
        }
        return out
    }

    /// The detector to build; throws on an unknown name or setting (``problems(at:)`` lists them all).
    public func configuration() throws(DetectorSettingError) -> DetectorConfiguration {
        try DetectorConfiguration(name: name, assignments: settings.keys.sorted().map { "\($0)=\(settings[$0]!)" })
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        guard DetectorNames.value(named: name) != nil else { return [ConfigProblem(path + ["name"], DetectorNames.mismatch(name))] }
        return settings.keys.sorted().compactMap { key -> ConfigProblem? in
            do throws(DetectorSettingError) {
                _ = try DetectorConfiguration(name: name, assignments: ["\(key)=\(settings[key]!)"])
                return nil
            } catch {
                return ConfigProblem(path + ["settings", key], error.description)
            }
        }
    }
}

/// The words of `detector.name`: the catalog's detectors.
enum DetectorNames: WordList {
    static var words: [(word: String, value: String)] { DetectorCatalog.names.map { ($0, $0) } }
}
