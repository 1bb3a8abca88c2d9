import FallGuardCore
import Glibc

/// The kernel's `power_supply` class (`/sys/class/power_supply/<name>/{type,capacity,status,online}`),
/// as the fuel-gauge drivers of Pi UPS HATs (`max17040_battery`, `bq27xxx_battery`), a laptop's
/// ACPI battery and the kernel's `test_power` fill it. Read with plain `open`/`read` of a few
/// short files: one pass costs some tens of microseconds (`bench/power-poll.sh`).
public struct PowerSupplyClass: Sendable {
    /// `/sys/class/power_supply`, or a folder laid out like it (tests).
    public let root: String

    public init(root: String = "/sys/class/power_supply") { self.root = root }

    /// What the supplies say now. A supply whose `type` cannot be read is left out; a folder
    /// that is not there is an empty reading (nothing claimed).
    public func read() -> PowerReading {
        var reading = PowerReading()
        for name in Self.entries(of: root).sorted() {
            let dir = root + "/" + name
            guard let type = Self.text(dir + "/type") else { continue }
            switch type {
            case "Battery":
                // A battery slot with nothing in it (`present` 0) says nothing.
                if Self.text(dir + "/present") == "0" { continue }
                reading.batteries.append(.init(name: name, capacity: Self.text(dir + "/capacity").flatMap { Int($0) }.map { min(100, max(0, $0)) },
                                               status: Self.text(dir + "/status") ?? "Unknown"))
            case "Mains", "USB", "Wireless", "USB_C", "USB_PD", "USB_DCP", "USB_CDP", "USB_ACA", "USB_PD_DRP", "BrickID":
                // Only a supply that says whether it is online (a Pi's under-voltage
                // `rpi-poe`/`hwmon` entries and the like may not).
                guard let online = Self.text(dir + "/online").flatMap({ Int($0) }) else { continue }
                reading.supplies.append(.init(name: name, type: type, online: online != 0))
            default:
                continue
            }
        }
        return reading
    }

    /// The names in `path` (not `.`, `..`); none when it cannot be opened.
    static func entries(of path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A short attribute file's text without its newline; nil when it cannot be read (missing,
    /// or the driver answers with an error, as a gauge off the bus does).
    static func text(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 128) }
        guard n > 0 else { return nil }
        var end = n
        while end > 0, buffer[end - 1] == 0x0A || buffer[end - 1] == 0x20 { end -= 1 }
        return String(decoding: buffer[0..<end], as: UTF8.self)
    }
}
