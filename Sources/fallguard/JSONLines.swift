import FallGuardCore
import Foundation
import Synchronization

/// The JSON lines `alarm`, `watch` and `gpio` print on standard output: one typed event each,
/// `{"event":"<name>", ...}` (keys sorted, so a line reads the same every run) with the fields' names in snake_case (`tNs` → `t_ns`), every
/// string escaped by the encoder.
struct JSONLine<Fields: Encodable>: Encodable {
    let event: String
    let fields: Fields

    private enum Key: String, CodingKey { case event }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(event, forKey: .event)
        try fields.encode(to: encoder)
    }

    var text: String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(#"{"event":"unencodable"}"#.utf8), as: UTF8.self)
    }
}

/// `value` as one indented JSON document on standard output, keys sorted: what `devices`,
/// `power` and `incidents` print with `--json`.
func printJSON<Value: Encodable>(_ value: Value) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// An event with no fields but its name.
struct NoFields: Encodable {}

/// A moment on CLOCK_MONOTONIC, as every line's `t_ns`.
struct Stamp: Encodable {
    var tNs = MonotonicClock.nanoseconds()
}

/// `event` with `fields` as one line to standard output, flushed (lines come from several threads).
func emit<Fields: Encodable>(_ event: String, _ fields: Fields) {
    emit(JSONLine(event: event, fields: fields).text)
}

/// One line to standard output, flushed (lines come from several threads).
func emit(_ line: String) {
    outputLock.withLock { _ in
        print(line)
        fflush(nil)
    }
}

private let outputLock = Mutex(())
