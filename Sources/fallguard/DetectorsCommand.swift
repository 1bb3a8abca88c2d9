import ArgumentParser
import FallGuardCore

struct DetectorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detectors",
        abstract: "List the fall detectors and their settings (keys for --set), with defaults and units.")

    func run() throws {
        for name in DetectorCatalog.names {
            let params = try DetectorCatalog.parameters(for: name)
            print("\(name)\(name == DetectorCatalog.defaultName ? " (default)" : ""): \(DetectorCatalog.summary(for: name))")
            for p in params {
                let key = p.key.padding(to: 22)
                print("  \(key) \(p.defaultValue) \(p.unit)  [\(p.range.lowerBound)…\(p.range.upperBound)]  \(p.help)")
            }
            print()
        }
    }
}

extension String {
    func padding(to n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }
}
