import FallGuardCore
import Testing

/// Issue 36 item 2: the power watch tells each event once per episode, with hysteresis.
@Suite struct PowerWatchTests {
    static func reading(_ capacity: Int?, _ status: String = "Discharging", mains: Bool? = false) -> PowerReading {
        PowerReading(batteries: [.init(name: "BAT0", capacity: capacity, status: status)],
                     supplies: mains.map { [.init(name: "AC", type: "Mains", online: $0)] } ?? [])
    }

    /// A battery draining one percent a poll from 30 % to 0 % gives "battery low" once at 20 %
    /// and "shutting down" once at 5 %, however many polls see it there.
    @Test func aDrainingBatteryIsToldLowOnceAndShuttingDownOnce() {
        var watch = PowerWatch(thresholds: .init(batteryLow: 20, batteryCritical: 5, hysteresis: 5, onBatteryAfter: 1e9))
        var told: [PowerEvent] = []
        for (i, c) in (0...30).reversed().enumerated() {
            for repeatPoll in 0..<3 { told += watch.observe(Self.reading(c), at: Double(i * 3 + repeatPoll)) }
        }
        #expect(told == [.batteryLow(battery: "BAT0", capacity: 20), .shuttingDown(battery: "BAT0", capacity: 5)])
    }

    /// A gauge wobbling around the threshold (19, 21, 19, 22 %) is told once; only after it
    /// rose to threshold + hysteresis (25 %) can it be told again.
    @Test func aWobblingGaugeIsToldOnceUntilItRoseByTheHysteresis() {
        var watch = PowerWatch(thresholds: .init(batteryLow: 20, batteryCritical: 5, hysteresis: 5, onBatteryAfter: 1e9))
        var told: [PowerEvent] = []
        for (t, c) in [19, 21, 19, 22, 20, 24, 19].enumerated() { told += watch.observe(Self.reading(c), at: Double(t)) }
        #expect(told == [.batteryLow(battery: "BAT0", capacity: 19)])
        told = []
        for (t, c) in [25, 24, 18].enumerated() { told += watch.observe(Self.reading(c), at: Double(10 + t)) }
        #expect(told == [.batteryLow(battery: "BAT0", capacity: 18)])
    }

    /// A low battery that is charging is not news; once it discharges again below the
    /// threshold, it is.
    @Test func aChargingBatteryIsNotLow() {
        var watch = PowerWatch()
        #expect(watch.observe(Self.reading(10, "Charging", mains: true), at: 0) == [])
        #expect(watch.observe(Self.reading(12, "Charging", mains: true), at: 10) == [])
        #expect(watch.observe(Self.reading(12, "Discharging", mains: true), at: 20) == [.batteryLow(battery: "BAT0", capacity: 12)])
    }

    /// The mains gone for less than `on-battery-after` is a flicker: nothing. Gone longer:
    /// "on battery" once, then "mains back" once when it returns.
    @Test func onBatteryAfterTheThresholdAndMainsBackOnce() {
        var watch = PowerWatch(thresholds: .init(onBatteryAfter: 60))
        #expect(watch.observe(Self.reading(80, mains: true), at: 0) == [])
        #expect(watch.observe(Self.reading(80, mains: false), at: 10) == [])
        #expect(watch.observe(Self.reading(80, mains: false), at: 50) == [])
        #expect(watch.observe(Self.reading(80, mains: true), at: 60) == [], "a 50 s cut is a flicker")
        #expect(watch.observe(Self.reading(80, mains: false), at: 100) == [])
        #expect(watch.observe(Self.reading(79, mains: false), at: 159) == [])
        let battery = PowerReading.Battery(name: "BAT0", capacity: 79, status: "Discharging")
        #expect(watch.observe(Self.reading(79, mains: false), at: 160) == [.onBattery(since: 100, battery: battery)])
        #expect(watch.observe(Self.reading(78, mains: false), at: 170) == [])
        #expect(watch.onBattery)
        #expect(watch.observe(Self.reading(78, mains: true), at: 200) == [.mainsBack(after: 100)])
        #expect(watch.observe(Self.reading(78, mains: true), at: 210) == [])
        #expect(!watch.onBattery)
    }

    /// Without an external supply, the battery's status says whether it is fed; with neither,
    /// nothing is claimed.
    @Test func mainsFromTheBatteryStatusWhenNoSupplySaysAndNothingWithoutEither() {
        #expect(Self.reading(50, "Charging", mains: nil).mainsOnline == true)
        #expect(Self.reading(50, "Full", mains: nil).mainsOnline == true)
        #expect(Self.reading(50, "Discharging", mains: nil).mainsOnline == false)
        #expect(Self.reading(50, "Unknown", mains: nil).mainsOnline == nil)
        #expect(PowerReading().isEmpty && PowerReading().mainsOnline == nil)
        var watch = PowerWatch(thresholds: .init(onBatteryAfter: 0))
        #expect(watch.observe(PowerReading(), at: 0) == [] && watch.observe(PowerReading(), at: 100) == [])
    }

    /// Two batteries: the lowest decides.
    @Test func theLowestBatteryDecides() {
        var watch = PowerWatch()
        let r = PowerReading(batteries: [.init(name: "a", capacity: 90, status: "Discharging"),
                                         .init(name: "b", capacity: 15, status: "Discharging")])
        #expect(watch.observe(r, at: 0) == [.batteryLow(battery: "b", capacity: 15)])
    }
}
