import ArgumentParser
import FallGuardConfigKeys
import FallGuardCore

/// An option that takes a word of a configuration word list (`--buzzer gpio`, `--bias pull-up`):
/// the same words as the configuration file's key, and ArgumentParser's own message naming the
/// option and listing them when a word is wrong.
struct Word<List: WordList>: ExpressibleByArgument, Sendable where List.Value: Equatable {
    let value: List.Value

    init(_ value: List.Value) { self.value = value }

    init?(argument: String) {
        guard let value = List.value(named: argument) else { return nil }
        self.value = value
    }

    var defaultValueDescription: String { List.word(for: value) }
    static var allValueStrings: [String] { List.words.map(\.word) }
}

/// `--cpu`: `last`, `any` or a CPU number, as `sensor.cpu` takes them.
extension SensorCPU: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
    public var defaultValueDescription: String { description }
}
