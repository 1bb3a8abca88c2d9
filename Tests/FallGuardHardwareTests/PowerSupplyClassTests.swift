import FallGuardCore
import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

/// Issue 36 item 2: the `power_supply` class read from a tree laid out as the kernel's
/// (the names and files of `test_power`, a UPS HAT's `max17040_battery`, a Pi's plain supply).
@Suite struct PowerSupplyClassTests {
    /// Makes `<root>/<name>/<file>` with each value followed by a newline, as sysfs shows them.
    static func supply(_ root: String, _ name: String, _ files: [String: String]) {
        try! FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
        for (file, value) in files { FileManager.default.createFile(atPath: "\(root)/\(name)/\(file)", contents: Data((value + "\n").utf8)) }
    }

    @Test func theTestPowerTreeReadsAsOneBatteryAndTwoSupplies() {
        let dir = TempDirectory("power")
        Self.supply(dir.path, "test_ac", ["type": "Mains", "online": "1"])
        Self.supply(dir.path, "test_usb", ["type": "USB", "online": "0"])
        Self.supply(dir.path, "test_battery", ["type": "Battery", "capacity": "15", "status": "Discharging", "present": "1"])
        let r = PowerSupplyClass(root: dir.path).read()
        #expect(r.batteries == [.init(name: "test_battery", capacity: 15, status: "Discharging")])
        #expect(r.supplies == [.init(name: "test_ac", type: "Mains", online: true), .init(name: "test_usb", type: "USB", online: false)])
        #expect(r.mainsOnline == true)
        Self.supply(dir.path, "test_ac", ["online": "0"])
        #expect(PowerSupplyClass(root: dir.path).read().mainsOnline == false)
    }

    /// A UPS HAT's fuel gauge alone (no mains supply): the battery's status says.
    @Test func aFuelGaugeAloneGivesTheMainsFromItsStatus() {
        let dir = TempDirectory("power")
        Self.supply(dir.path, "max1704x-0", ["type": "Battery", "capacity": "87", "status": "Charging"])
        let r = PowerSupplyClass(root: dir.path).read()
        #expect(r.batteries.first?.capacity == 87 && r.mainsOnline == true)
    }

    /// No folder, an empty folder, a battery slot with nothing in it, a supply with no
    /// `online`, an unknown type: nothing is claimed.
    @Test func nothingThereClaimsNothing() {
        let dir = TempDirectory("power")
        #expect(PowerSupplyClass(root: dir.path + "/absent").read().isEmpty)
        #expect(PowerSupplyClass(root: dir.path).read().isEmpty)
        Self.supply(dir.path, "BAT1", ["type": "Battery", "present": "0", "capacity": "0"])
        Self.supply(dir.path, "rpi-poe", ["type": "Mains"])
        Self.supply(dir.path, "hidpp_battery_0", ["type": "Unknownish", "online": "1"])
        #expect(PowerSupplyClass(root: dir.path).read().isEmpty)
    }

    /// A capacity the driver cannot give (an error reading it) is nil, not 0; out-of-range is clamped.
    @Test func anUnreadableCapacityIsUnknownNotZero() {
        let dir = TempDirectory("power")
        Self.supply(dir.path, "BAT0", ["type": "Battery", "status": "Discharging"])
        Self.supply(dir.path, "BAT1", ["type": "Battery", "status": "Discharging", "capacity": "104"])
        let r = PowerSupplyClass(root: dir.path).read()
        #expect(r.batteries.map(\.capacity) == [nil, 100])
    }
}
