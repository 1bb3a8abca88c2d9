import ArgumentParser
import FallGuardCore
import FallGuardHardware
import Foundation

/// `fallguard power`: what the power watch sees in the `power_supply` class (a UPS HAT's
/// fuel gauge once its overlay is on), and what one read costs (`--repeat`, bench/power-poll.sh).
struct PowerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power",
        abstract: "Show the batteries and mains supplies the power watch reads (power_supply class).")

    @Option(help: "The power_supply folder (power.root).")
    var root = "/sys/class/power_supply"

    @Flag(help: "Print JSON.")
    var json = false

    @Option(name: .customLong("repeat"), help: "Read it N times and print the CPU time of one read (for bench/power-poll.sh).")
    var reads: Int?

    func run() throws {
        let source = PowerSupplyClass(root: root)
        if let reads {
            guard reads > 0 else { throw ValidationError("--repeat must be at least 1") }
            let before = ProcessUsage.current().cpuSeconds
            var batteries = 0
            for _ in 0..<reads { batteries &+= source.read().batteries.count }
            let cpu = ProcessUsage.current().cpuSeconds - before
            print(String(format: "reads %d cpu_s %.6f per_read_us %.2f supplies_seen %d", reads, cpu, cpu / Double(reads) * 1e6,
                         batteries / reads))
            return
        }
        let reading = source.read()
        if json {
            try printJSON(reading)
            return
        }
        if reading.isEmpty {
            print("No battery and no mains supply in \(root): the power watch claims nothing.")
            print("A UPS HAT's fuel gauge appears here once its overlay is on (docs/off-the-grid.md).")
            return
        }
        for b in reading.batteries {
            print("battery \(b.name): \(b.capacity.map { "\($0) %" } ?? "capacity unknown"), \(b.status)")
        }
        for s in reading.supplies { print("\(s.type.lowercased()) \(s.name): \(s.online ? "online" : "offline")") }
        print("mains: \(reading.mainsOnline.map { $0 ? "online" : "offline" } ?? "unknown")")
    }
}
