import FallGuardConfigKeys
import Yams

/// A `DecodingError` said in the words of the configuration file: which key, what was
/// expected, what was found.
struct DecodingProblem {
    /// Path below the node being decoded.
    var path: [String]
    var message: String
    /// False when dropping the value cannot help (a key without a default is missing).
    var canRetryWithout: Bool

    init(_ error: DecodingError, in node: Node) {
        func steps(_ keys: [any CodingKey]) -> [String] {
            keys.map { k in k.intValue.map(String.init) ?? k.stringValue }
        }
        func found(_ p: [String]) -> String {
            node.value(at: p[...])?.shortDescription ?? "nothing"
        }
        switch error {
        case let .typeMismatch(type, context):
            path = steps(context.codingPath)
            message = "expected \(Self.expectation(type)), found \(found(path))"
            canRetryWithout = true
        case let .valueNotFound(type, context):
            path = steps(context.codingPath)
            message = "expected \(Self.expectation(type)), found nothing (null)"
            canRetryWithout = true
        case let .keyNotFound(key, context):
            path = steps(context.codingPath) + [key.stringValue]
            message = "missing (this key has no default)"
            canRetryWithout = false
        case let .dataCorrupted(context):
            path = steps(context.codingPath)
            message = context.debugDescription
            canRetryWithout = true
        @unknown default:
            path = []
            message = "\(error)"
            canRetryWithout = false
        }
    }

    /// `Double` → "a number", `Array<…>` → "a list", a struct → "a mapping".
    static func expectation(_ type: Any.Type) -> String { expectation(named: String(describing: type)) }

    static func expectation(named name: String) -> String {
        switch name {
        case "Double", "Float", "Decimal": return "a number"
        case "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64":
            return "a whole number"
        case "Bool": return "true or false"
        case "String", "Scalar": return "a single value"
        case "Sequence": return "a list"
        default:
            if name.hasPrefix("Array<") { return "a list" }
            if name.hasPrefix("Optional<") { return expectation(named: String(name.dropFirst(9).dropLast())) }
            return "a mapping (key: value lines)"
        }
    }
}
