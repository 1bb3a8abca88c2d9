@testable import FallGuardConfig
import FallGuardCore
import Testing

/// Issue 36: `power:` keys, percentages written as the issue writes them, did-you-mean, ranges.
@Suite struct PowerSectionTests {
    static func load(_ yaml: String) -> (DaemonConfiguration, [String]) {
        let (c, d) = DaemonConfiguration.load(yaml: yaml, path: "config.yaml")
        return (c, d.map(\.description))
    }

    @Test func percentagesReadWithOrWithoutTheSign() {
        let (c, lines) = Self.load("""
            power:
              battery-low: 20 %
              battery-critical: 4%
              hysteresis: 3
              on-battery-after: 30
              poll-interval: 2
            """)
        #expect(lines == [])
        #expect(c.power.thresholds == PowerThresholds(batteryLow: 20, batteryCritical: 4, hysteresis: 3, onBatteryAfter: 30))
        #expect(c.power.pollInterval == 2)
    }

    @Test func aMisspeltKeyGetsTheClosestAndBadValuesTheirLine() {
        let (_, lines) = Self.load("""
            power:
              battery-lwo: 20
            """)
        #expect(lines == ["config.yaml:2: power.battery-lwo: unknown key 'battery-lwo' (did you mean 'battery-low'?)"])
        let (_, bad) = Self.load("""
            power:
              battery-low: twenty
              poll-interval: 0.1
            """)
        #expect(bad.contains { $0.hasPrefix("config.yaml:2: power.battery-low:") && $0.contains("not a percentage") }, "\(bad)")
        let (_, range) = Self.load("""
            power:
              battery-low: 120 %
              battery-critical: 130
              poll-interval: 0.1
            """)
        #expect(range.contains("config.yaml:2: power.battery-low: 120 % is outside 0...100 %"), "\(range)")
        #expect(range.contains("config.yaml:4: power.poll-interval: 0.1 s is outside 1.0...600.0 s"), "\(range)")
        #expect(range.contains { $0.contains("power.battery-critical: 130 % must be below battery-low") }, "\(range)")
    }
}
