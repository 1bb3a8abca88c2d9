import FallGuardCore

/// `detector:` — which fall detector runs and its tuned settings (see `fallguard detectors`).
public struct DetectorSection: ConfigSection, Equatable {
    /// A name from ``DetectorCatalog`` (key `name`, default `multiphase`).
    public var name: String = DetectorCatalog.defaultName
    /// Settings over the detector's defaults, e.g. `impact: 1.75` (key `settings`, default none).
    public var settings: [String: Double] = [:]

    public init() {}

    enum CodingKeys: String, CodingKey { case name, settings }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.value(.name, default: name)
        settings = try c.value(.settings, default: settings)
    }

    /// The detector to build; throws on an unknown name or setting (``problems(at:)`` lists them all).
    public func configuration() throws(DetectorSettingError) -> DetectorConfiguration {
        try DetectorConfiguration(name: name, assignments: settings.keys.sorted().map { "\($0)=\(settings[$0]!)" })
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        do {
            _ = try DetectorCatalog.parameters(for: name)
        } catch {
            return [ConfigProblem(path + ["name"], error.description)]
        }
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
