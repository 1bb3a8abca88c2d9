import FallGuardConfigKeys
import FallGuardCore
import Foundation

/// `power:` — the battery and the mains, from the kernel's `power_supply` class (a UPS HAT's
/// fuel gauge, a wearable's battery). Without a battery or an external supply there, nothing
/// is claimed: the status says nothing of power.
///
/// ```yaml
/// power:
///   enabled: true
///   root: /sys/class/power_supply
///   poll-interval: 10          # s between two reads, 1...600
///   battery-low: 20 %          # "battery low", once until it is hysteresis above again
///   battery-critical: 5 %      # "shutting down": the last word before the battery's end
///   hysteresis: 5 %
///   on-battery-after: 60       # s without mains before "on battery"; "mains back" after it
/// ```
public struct PowerSection: KeyedSection, Codable, Equatable {
    public var enabled = true
    public var root = "/sys/class/power_supply"
    public var pollInterval: Double = 10
    public var batteryLow = 20
    public var batteryCritical = 5
    public var hysteresis = 5
    public var onBatteryAfter: Double = 60

    public init() {}

    public static var keys: [ConfigKey<Self>] {
        [.value("enabled", \.enabled), .value("root", \.root),
         .value("poll-interval", \.pollInterval, in: 1...600, unit: " s"),
         percent("battery-low", \.batteryLow), percent("battery-critical", \.batteryCritical),
         percent("hysteresis", \.hysteresis),
         .value("on-battery-after", \.onBatteryAfter, in: 0...86_400, unit: " s")]
    }

    /// A percentage written `20`, `20%` or `20 %`, within 0...100.
    static func percent(_ name: String, _ property: WritableKeyPath<Self, Int>) -> ConfigKey<Self> {
        .custom(name, property, read: { c, k in
            if let n = try? c.decodeIfPresent(Int.self, forKey: k) { return n }
            guard let text = try c.decodeIfPresent(String.self, forKey: k) else { return nil }
            let digits = text.hasSuffix("%") ? String(text.dropLast()).trimmingCharacters(in: .whitespaces) : text
            guard let n = Int(digits) else {
                throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "'\(text)' is not a percentage (write 20 or \"20 %\")")
            }
            return n
        }, write: { v, c, k in try c.encode(v, forKey: k) })
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var out: [ConfigProblem] = []
        for (key, v) in [(\Self.batteryLow, batteryLow), (\.batteryCritical, batteryCritical), (\.hysteresis, hysteresis)]
        where !(0...100).contains(v) {
            out.append(ConfigProblem(Self.at(path, key), "\(v) % is outside 0...100 %"))
        }
        if batteryCritical >= batteryLow {
            out.append(ConfigProblem(Self.at(path, \.batteryCritical), "\(batteryCritical) % must be below battery-low (\(batteryLow) %)"))
        }
        if !root.hasPrefix("/") {
            out.append(ConfigProblem(Self.at(path, \.root), "'\(root)' is not an absolute path"))
        }
        return out
    }

    /// The watch's thresholds.
    public var thresholds: PowerThresholds {
        PowerThresholds(batteryLow: batteryLow, batteryCritical: batteryCritical, hysteresis: hysteresis,
                        onBatteryAfter: onBatteryAfter)
    }
}
