/// What the kernel's `power_supply` class says at one moment: the batteries (a UPS HAT's fuel
/// gauge, a wearable's cell) and the external supplies (mains, USB). Plain values read by the
/// daemon (`PowerSupplyClass`, Hardware); the decisions are ``PowerWatch``'s.
public struct PowerReading: Sendable, Equatable, Codable {
    public struct Battery: Sendable, Equatable, Codable {
        /// The supply's name in `/sys/class/power_supply` (`BAT0`, `max17040`, `test_battery`).
        public var name: String
        /// Percent, 0...100; nil when the driver gives no `capacity`.
        public var capacity: Int?
        /// The driver's `status` word: `Charging`, `Discharging`, `Full`, `Not charging`, `Unknown`.
        public var status: String

        public init(name: String, capacity: Int?, status: String) {
            (self.name, self.capacity, self.status) = (name, capacity, status)
        }

        /// Charging or full: something feeds it.
        public var isFed: Bool { status == "Charging" || status == "Full" }
    }

    /// An external supply (`type` Mains, USB…, Wireless) and whether it is `online`.
    public struct Supply: Sendable, Equatable, Codable {
        public var name: String
        public var type: String
        public var online: Bool

        public init(name: String, type: String, online: Bool) { (self.name, self.type, self.online) = (name, type, online) }
    }

    public var batteries: [Battery]
    public var supplies: [Supply]

    public init(batteries: [Battery] = [], supplies: [Supply] = []) { (self.batteries, self.supplies) = (batteries, supplies) }

    /// Nothing to say: no battery and no external supply (a Pi on a plain power adapter shows
    /// none, or only its own under-voltage supply that has no `online`).
    public var isEmpty: Bool { batteries.isEmpty && supplies.isEmpty }

    /// Whether the mains feeds the device: any external supply online; without one, a battery
    /// that is charging or full says so and a discharging one says not. nil: nobody can tell.
    public var mainsOnline: Bool? {
        if !supplies.isEmpty { return supplies.contains(where: \.online) }
        let known = batteries.filter { $0.status == "Charging" || $0.status == "Full" || $0.status == "Discharging" }
        return known.isEmpty ? nil : known.contains(where: \.isFed)
    }

    /// The lowest capacity among the batteries that give one (the first to run out decides).
    public var lowestBattery: Battery? {
        batteries.filter { $0.capacity != nil }.min { $0.capacity! < $1.capacity! }
    }
}

/// When a power event is told: thresholds in percent and seconds.
public struct PowerThresholds: Sendable, Equatable, Codable {
    /// At or below: "battery low", once until the battery is `hysteresis` above it again.
    public var batteryLow: Int
    /// At or below: "shutting down", the last word before the battery's end.
    public var batteryCritical: Int
    /// Percent above a threshold before it may fire again (a gauge wobbles by a percent or two).
    public var hysteresis: Int
    /// Seconds without mains before "on battery" is told (a flicker is not news).
    public var onBatteryAfter: Double

    public init(batteryLow: Int = 20, batteryCritical: Int = 5, hysteresis: Int = 5, onBatteryAfter: Double = 60) {
        (self.batteryLow, self.batteryCritical, self.hysteresis, self.onBatteryAfter) =
            (batteryLow, batteryCritical, hysteresis, onBatteryAfter)
    }
}

/// A change of power worth telling the helpers.
public enum PowerEvent: Sendable, Equatable {
    /// The lowest battery fell to `batteryLow` or below while nothing charges it.
    case batteryLow(battery: String, capacity: Int)
    /// It fell to `batteryCritical` or below: the device will stop soon.
    case shuttingDown(battery: String, capacity: Int)
    /// The mains has been gone for `onBatteryAfter` seconds.
    case onBattery(since: Double, battery: PowerReading.Battery?)
    /// The mains is back after an ``onBattery`` was told.
    case mainsBack(after: Double)
}

/// Decides from successive ``PowerReading``s what is told, each once per episode: pure, fed
/// with readings and the monotonic time, so a test replays a day of a battery in microseconds.
public struct PowerWatch: Sendable, Equatable {
    public var thresholds: PowerThresholds
    /// Told, and not yet re-armed by the battery rising `hysteresis` above the threshold.
    public private(set) var lowTold = false
    public private(set) var criticalTold = false
    /// Since when (monotonic s) no mains was seen; nil while it is there or unknown.
    public private(set) var mainsGoneSince: Double?
    public private(set) var onBatteryTold = false
    /// The last reading, for the status.
    public private(set) var last: PowerReading?

    public init(thresholds: PowerThresholds = .init()) { self.thresholds = thresholds }

    /// The events `reading` at `time` gives, in the order they happened.
    public mutating func observe(_ reading: PowerReading, at time: Double) -> [PowerEvent] {
        last = reading
        var events: [PowerEvent] = []
        if let battery = reading.lowestBattery, let capacity = battery.capacity {
            let t = thresholds
            if capacity >= t.batteryLow + t.hysteresis || battery.isFed { lowTold = false }
            if capacity >= t.batteryCritical + t.hysteresis || battery.isFed { criticalTold = false }
            if !battery.isFed {
                if capacity <= t.batteryCritical, !criticalTold {
                    criticalTold = true
                    lowTold = true   // the last word says it all
                    events.append(.shuttingDown(battery: battery.name, capacity: capacity))
                } else if capacity <= t.batteryLow, !lowTold {
                    lowTold = true
                    events.append(.batteryLow(battery: battery.name, capacity: capacity))
                }
            }
        }
        switch reading.mainsOnline {
        case false?:
            let since = mainsGoneSince ?? time
            mainsGoneSince = since
            if !onBatteryTold, time - since >= thresholds.onBatteryAfter {
                onBatteryTold = true
                events.append(.onBattery(since: since, battery: reading.lowestBattery))
            }
        case true?:
            if onBatteryTold, let since = mainsGoneSince { events.append(.mainsBack(after: time - since)) }
            (mainsGoneSince, onBatteryTold) = (nil, false)
        case nil:
            break   // cannot tell: keep what was known
        }
        return events
    }

    /// Whether the device now runs on its battery as told to the helpers.
    public var onBattery: Bool { onBatteryTold }
}
