import FallGuardConfigKeys
import Yams

/// The shape of an `Encodable` value, its mapping keys and list items, with every scalar left
/// empty: what the unknown-key check compares a configuration file against.
///
/// It replaces rendering the decoded section with `YAMLEncoder` and parsing the text back.
/// That rendered every number through Foundation's `NumberFormatter`, which opened ICU's locale
/// data: about 4 MB of resident memory in the daemon, for a list of key names.
func keyShape<T: Encodable>(of value: T) throws -> Node {
    let shape = KeyShape()
    try value.encode(to: KeyShapeEncoder(shape: shape, codingPath: []))
    return shape.node
}

final class KeyShape {
    private enum Kind { case scalar, mapping, sequence }
    private var kind = Kind.scalar
    private var keys: [(String, KeyShape)] = []
    private var items: [KeyShape] = []

    var node: Node {
        switch kind {
        case .scalar: YAMLTypes.plain("")
        case .mapping: .mapping(Node.Mapping(keys.map { (YAMLTypes.plain($0.0, isKey: true), $0.1.node) }, YAMLTypes.tag(.implicit)))
        case .sequence: .sequence(Node.Sequence(items.map(\.node), YAMLTypes.tag(.implicit)))
        }
    }

    func becomeMapping() { if kind != .mapping { kind = .mapping; keys = [] } }
    func becomeSequence() { if kind != .sequence { kind = .sequence; items = [] } }

    func child(forKey key: String) -> KeyShape {
        if let existing = keys.first(where: { $0.0 == key }) { return existing.1 }
        let c = KeyShape()
        keys.append((key, c))
        return c
    }

    func appendItem() -> KeyShape {
        let c = KeyShape()
        items.append(c)
        return c
    }

    var itemCount: Int { items.count }
}

private struct KeyShapeEncoder: Encoder {
    let shape: KeyShape
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        shape.becomeMapping()
        return KeyedEncodingContainer(KeyedShape(shape: shape, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        shape.becomeSequence()
        return UnkeyedShape(shape: shape, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleShape(shape: shape, codingPath: codingPath)
    }
}

private struct KeyedShape<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let shape: KeyShape
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { _ = shape.child(forKey: key.stringValue) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try value.encode(to: KeyShapeEncoder(shape: shape.child(forKey: key.stringValue), codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyShapeEncoder(shape: shape.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        KeyShapeEncoder(shape: shape.child(forKey: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        KeyShapeEncoder(shape: shape.child(forKey: "super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        KeyShapeEncoder(shape: shape.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedShape: UnkeyedEncodingContainer {
    let shape: KeyShape
    let codingPath: [any CodingKey]
    var count: Int { shape.itemCount }

    mutating func encodeNil() throws { _ = shape.appendItem() }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: KeyShapeEncoder(shape: shape.appendItem(), codingPath: codingPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyShapeEncoder(shape: shape.appendItem(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        KeyShapeEncoder(shape: shape.appendItem(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        KeyShapeEncoder(shape: shape.appendItem(), codingPath: codingPath)
    }
}

private struct SingleShape: SingleValueEncodingContainer {
    let shape: KeyShape
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws {}
    // Scalars: nothing to record (each needs its own witness, or Double.encode(to:) would recurse).
    mutating func encode(_ value: Bool) throws {}
    mutating func encode(_ value: String) throws {}
    mutating func encode(_ value: Double) throws {}
    mutating func encode(_ value: Float) throws {}
    mutating func encode(_ value: Int) throws {}
    mutating func encode(_ value: Int8) throws {}
    mutating func encode(_ value: Int16) throws {}
    mutating func encode(_ value: Int32) throws {}
    mutating func encode(_ value: Int64) throws {}
    mutating func encode(_ value: UInt) throws {}
    mutating func encode(_ value: UInt8) throws {}
    mutating func encode(_ value: UInt16) throws {}
    mutating func encode(_ value: UInt32) throws {}
    mutating func encode(_ value: UInt64) throws {}

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: KeyShapeEncoder(shape: shape, codingPath: codingPath))
    }
}
