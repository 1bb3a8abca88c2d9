import ArgumentParser
import FallGuardHardware
import Foundation

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List IIO accelerometers: name, URI, buffered or polled, rates, scale, mount matrix, gyroscope.")

    @Option(help: "libiio context URI: local: on the Pi, ip:HOST for a sensor served by iiod.")
    var uri = "local:"

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let list: [AccelerometerInfo]
        do {
            list = try AccelerometerDiscovery.list(uri: uri)
        } catch {
            printError(error.description)
            throw ExitStatus.noInput
        }
        if json {
            try printJSON(list)
            return
        }
        if list.isEmpty {
            print("No IIO device with accel_x/y/z channels at \(uri).")
            print("On a Raspberry Pi: enable the sensor's overlay in /boot/firmware/config.txt (see README) and reboot.")
            return
        }
        for d in list {
            print("\(d.name) (\(d.id)) at \(d.uri)")
            print("  mode            \(d.mode.rawValue)\(d.trigger.map { ", trigger \($0)" } ?? "")\(d.hasTimestamp ? ", timestamp channel" : "")")
            print("  rate            \(d.samplingFrequency.map { "\(format($0)) Hz" } ?? "unknown")"
                  + (d.availableFrequencies.isEmpty ? "" : " (available: \(d.availableFrequencies.map(format).joined(separator: " ")))"))
            print("  scale           \(d.scale) m/s² per count = \(String(format: "%.3f", d.scaleG * 1000)) mg"
                  + (d.availableScales.isEmpty ? "" : " (available: \(d.availableScales.map { String($0) }.joined(separator: " ")))"))
            if let m = d.mountMatrix {
                print("  mount matrix    " + m.map { $0.map(format).joined(separator: ", ") }.joined(separator: "; "))
            }
            print("  axes            \(d.axes)")
            if let g = d.gyroscope {
                print("  gyroscope       \(g.scale) rad/s per count = \(String(format: "%.4f", g.scaleDPS)) °/s"
                      + (g.rangeDPS.map { String(format: ", ±%.0f °/s", $0) } ?? "")
                      + (g.availableScales.isEmpty ? "" : " (available: \(g.availableScales.map { String($0) }.joined(separator: " ")))"))
            }
        }
    }

    func format(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
}
