/// One problem found in the configuration: a bad value, a missing credential, an unknown key.
/// The loader turns ``keyPath`` into `file:line` for the person fixing it; start-up stops
/// (exit status 78) if any problem is an error.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable, Equatable { case error, warning }

    /// Where, from the top of the file: `["channels", "sms", "account-sid"]`; list items are
    /// their index as a string: `["contacts", "0", "phone"]`.
    public var keyPath: [String]
    public var message: String
    public var severity: Severity

    public init(_ keyPath: [String], _ message: String, severity: Severity = .error) {
        (self.keyPath, self.message, self.severity) = (keyPath, message, severity)
    }

    /// `channels.sms.account-sid`
    public var key: String { keyPath.joined(separator: ".") }

    public var description: String { "\(key): \(message)" }
}

/// A section of the configuration file, or a value inside one. Sections read the file's
/// kebab-case keys, give every optional key its documented default when decoding, and encode
/// back every key they accept (the loader reports keys that do not survive a decode/encode
/// round trip as unknown). Checks that need more than a type (ranges, E.164 numbers, URLs,
/// credentials present) go in ``problems(at:)``.
///
/// Most sections are a ``KeyedSection``: each key declared once as a ``ConfigKey``, and the
/// three requirements derived from the list. A value read from a single scalar (`sensor.cpu`)
/// or a list entry chosen by its `type:` conforms directly.
public protocol ConfigSection: Sendable {
    /// Reads the value from the file's keys, defaults for the absent ones.
    init(fromConfig decoder: any Decoder) throws
    /// Writes every key the value accepts, nil ones as `null`.
    func encodeConfig(to encoder: any Encoder) throws
    /// Everything wrong with the values, each with its full key path (`path` is where this
    /// section sits in the file).
    func problems(at path: [String]) -> [ConfigProblem]
}

/// A `Codable` type whose coding keys are the file's (a test's small section) gets the two
/// coding requirements from its `Codable` conformance.
extension ConfigSection where Self: Codable {
    public init(fromConfig decoder: any Decoder) throws { try self.init(from: decoder) }
    public func encodeConfig(to encoder: any Encoder) throws { try encode(to: encoder) }
}

/// A ``ConfigSection`` as a `Codable` value: what the decoder and the key-shape encoder see,
/// so that a plain value of a runtime module is read with this module's keys.
public struct Configured<Value: ConfigSection>: Codable, Sendable {
    public var value: Value

    public init(_ value: Value) { self.value = value }
    public init(from decoder: any Decoder) throws { value = try Value(fromConfig: decoder) }
    public func encode(to encoder: any Encoder) throws { try value.encodeConfig(to: encoder) }
}

extension KeyedDecodingContainer {
    /// The section at `key`, or nil when the key is missing or null.
    package func section<T: ConfigSection>(_ type: T.Type, forKey key: Key) throws -> T? {
        try decodeIfPresent(Configured<T>.self, forKey: key)?.value
    }

    /// The sections listed at `key`, or nil when the key is missing or null.
    package func sections<T: ConfigSection>(_ type: [T].Type, forKey key: Key) throws -> [T]? {
        try decodeIfPresent([Configured<T>].self, forKey: key)?.map(\.value)
    }

    /// The sections by name at `key`, or nil when the key is missing or null.
    package func sections<T: ConfigSection>(_ type: [String: T].Type, forKey key: Key) throws -> [String: T]? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        let decoder = try superDecoder(forKey: key)
        guard let names = MappingKeys.names(at: decoder) else {
            return try decodeIfPresent([String: Configured<T>].self, forKey: key)?.mapValues(\.value)
        }
        let c = try decoder.container(keyedBy: ConfigKeyName.self)
        var sections: [String: T] = [:]
        for name in names { sections[name] = try c.decode(Configured<T>.self, forKey: ConfigKeyName(name)).value }
        return sections
    }
}

/// The names in each mapping of a document, by key path, handed to the decoder in its
/// `userInfo` (``userInfoKey``) so that a section of named sections (`channels:`) is read
/// without asking the decoder for its `allKeys`.
///
/// Why: Yams' `allKeys` compares every key with two marker nodes whose first use builds Yams'
/// default resolver, seven `NSRegularExpression`s, and with them ICU's regular-expression
/// engine, resident in the daemon from then on (README, "Memory"). A decoder without this
/// table still reads the mapping its own way.
public struct MappingKeys: Sendable {
    public static let userInfoKey = CodingUserInfoKey(rawValue: "fallguard.mapping-keys")!
    /// Key paths (steps joined by NUL; a list item is its index) to the mapping's key names.
    public let names: [String: [String]]

    public init(names: [String: [String]]) { self.names = names }

    package static func path(_ steps: [String]) -> String { steps.joined(separator: "\u{0}") }

    static func names(at decoder: any Decoder) -> [String]? {
        guard let table = decoder.userInfo[userInfoKey] as? MappingKeys else { return nil }
        return table.names[path(decoder.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue })]
    }
}

extension KeyedEncodingContainer {
    package mutating func encode<T: ConfigSection>(section value: T, forKey key: Key) throws {
        try encode(Configured(value), forKey: key)
    }

    package mutating func encode<T: ConfigSection>(sections values: [T], forKey key: Key) throws {
        try encode(values.map(Configured.init), forKey: key)
    }

    package mutating func encode<T: ConfigSection>(sections values: [String: T], forKey key: Key) throws {
        try encode(values.mapValues(Configured.init), forKey: key)
    }
}
