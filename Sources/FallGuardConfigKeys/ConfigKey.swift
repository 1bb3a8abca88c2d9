/// One key of a section, declared once: its name in the file (the kebab-case of the property's
/// name), the property it sets, its range or word list, and whether it is secret. The property's
/// own initial value is the default. Decoding, encoding (and so the unknown-key check and the
/// example file's shape) and the range problems all come from the section's list of these.
///
/// ```swift
/// public var countdown: Double = 30
/// static var keys: [ConfigKey<Self>] { [.value("countdown", \.countdown, in: 5...300, unit: " s"), …] }
/// ```
public struct ConfigKey<Section> {
    /// The key in the file (`alert-timeout`).
    public let name: String
    /// The property the key sets (`\AlarmSection.alertTimeout`).
    public let property: PartialKeyPath<Section>
    /// Whether the value is a secret (a password, a token): a channel's `secrets` are these
    /// (``KeyedSection/secretValues``), and the file's redactor masks them by their secret-sounding
    /// name (`ConfigKeyTests` keeps the two in step).
    public let isSecret: Bool
    /// The value of `section` as text, for a secret's redaction; nil when unset or not text.
    public let text: (Section) -> String?
    /// Whether an unset value is written (as `null`), so that the key is in the schema even then.
    public var writtenWhenUnset = true
    let read: (inout Section, KeyedDecodingContainer<ConfigKeyName>) throws -> Void
    let write: (Section, inout KeyedEncodingContainer<ConfigKeyName>) throws -> Void
    let check: (Section, [String]) -> [ConfigProblem]

    /// `update` reads the key (when present) over the property's current value.
    init<V>(_ name: String, _ property: WritableKeyPath<Section, V>, secret: Bool = false,
            update: @escaping (inout V, KeyedDecodingContainer<ConfigKeyName>, ConfigKeyName) throws -> Void,
            write: @escaping (V, inout KeyedEncodingContainer<ConfigKeyName>, ConfigKeyName) throws -> Void,
            problems: @escaping (V, [String]) -> [ConfigProblem]) {
        let key = ConfigKeyName(name)
        self.name = name
        self.property = property
        self.isSecret = secret
        self.text = { section in
            let v = section[keyPath: property]
            return (v as? String) ?? ((v as? String?) ?? nil)
        }
        self.read = { section, c in try update(&section[keyPath: property], c, key) }
        self.write = { section, c in try write(section[keyPath: property], &c, key) }
        self.check = { section, path in problems(section[keyPath: property], path + [name]) }
    }

    /// `read` gives the key's value, nil when absent; `check` says what is wrong with a value.
    init<V>(_ name: String, _ property: WritableKeyPath<Section, V>, secret: Bool = false,
            read: @escaping (KeyedDecodingContainer<ConfigKeyName>, ConfigKeyName) throws -> V?,
            write: @escaping (V, inout KeyedEncodingContainer<ConfigKeyName>, ConfigKeyName) throws -> Void,
            check: @escaping (V) -> String? = { _ in nil }) {
        self.init(name, property, secret: secret, update: { v, c, k in if let new = try read(c, k) { v = new } },
                  write: write, problems: { v, path in check(v).map { [ConfigProblem(path, $0)] } ?? [] })
    }
}

extension ConfigKey {
    /// Whether the key's property holds equal values in `a` and `b`; a value that is not
    /// `Equatable` is never the same (so a reload reports it rather than miss it).
    public func sameValue(_ a: Section, _ b: Section) -> Bool {
        guard let x = a[keyPath: property] as? any Equatable else { return false }
        return x.isEqual(to: b[keyPath: property])
    }

    /// A plain value; `required` keys have no default (missing: "this key has no default").
    public static func value<V: Codable>(_ name: String, _ property: WritableKeyPath<Section, V>, secret: Bool = false,
                                         required: Bool = false) -> Self {
        Self(name, property, secret: secret,
             read: { c, k in required ? try c.decode(V.self, forKey: k) : try c.decodeIfPresent(V.self, forKey: k) },
             write: { v, c, k in try c.encode(v, forKey: k) })
    }

    /// A number within `range` (`unit` follows each number in the message: `" s"`, `" ms"`).
    public static func value<V: Codable & Comparable>(_ name: String, _ property: WritableKeyPath<Section, V>,
                                                      in range: ClosedRange<V>, unit: String = "") -> Self {
        Self(name, property, read: { c, k in try c.decodeIfPresent(V.self, forKey: k) },
             write: { v, c, k in try c.encode(v, forKey: k) },
             check: { v in range.contains(v) ? nil : outside(v, range, unit) })
    }

    /// A value that may be absent (encoded as `null`, so that the key is known; with
    /// `nullWhenUnset: false` left out, so that the example file need not show it).
    public static func optional<V: Codable>(_ name: String, _ property: WritableKeyPath<Section, V?>, secret: Bool = false,
                                            nullWhenUnset: Bool = true) -> Self {
        var key = Self(name, property, secret: secret, read: { c, k in try c.decodeIfPresent(V.self, forKey: k).map { $0 } },
                       write: { v, c, k in if nullWhenUnset { try c.encodeOptional(v, forKey: k) } else { try c.encodeIfPresent(v, forKey: k) } })
        key.writtenWhenUnset = nullWhenUnset
        return key
    }

    /// An optional number within `range` when given.
    public static func optional<V: Codable & Comparable>(_ name: String, _ property: WritableKeyPath<Section, V?>,
                                                         in range: ClosedRange<V>, unit: String = "") -> Self {
        Self(name, property, read: { c, k in try c.decodeIfPresent(V.self, forKey: k).map { $0 } },
             write: { v, c, k in try c.encodeOptional(v, forKey: k) },
             check: { v in v.flatMap { range.contains($0) ? nil : outside($0, range, unit) } })
    }

    /// A word of `list` (a wrong word is reported with the list and the closest word).
    package static func word<List: WordList>(_ name: String, _ property: WritableKeyPath<Section, List.Value>,
                                             _ list: List.Type) -> Self where List.Value: Equatable {
        Self(name, property, read: { c, k in try c.decodeIfPresent(String.self, forKey: k).map { try word($0, list, c, k) } },
             write: { v, c, k in try c.encode(v, as: list, forKey: k) })
    }

    /// A nested section (`buzzer: {line: …}`), whole when given; its problems are found at its key.
    /// A `required` one has no default (missing: "this key has no default").
    public static func section<V: ConfigSection>(_ name: String, _ property: WritableKeyPath<Section, V>,
                                                 required: Bool = false) -> Self {
        Self(name, property, update: { v, c, k in
                 if required { v = try c.decode(Configured<V>.self, forKey: k).value } else if let new = try c.section(V.self, forKey: k) { v = new }
             },
             write: { v, c, k in try c.encode(section: v, forKey: k) }, problems: { v, path in v.problems(at: path) })
    }

    /// A nested section of keys: each key given replaces the current value's (a route's
    /// `deadline` alone keeps that route's channels).
    public static func section<V: KeyedSection>(_ name: String, _ property: WritableKeyPath<Section, V>) -> Self {
        Self(name, property, update: { v, c, k in
                 guard c.contains(k), try !c.decodeNil(forKey: k) else { return }
                 v = try V(keysFrom: c.superDecoder(forKey: k), over: v)
             },
             write: { v, c, k in try c.encode(section: v, forKey: k) }, problems: { v, path in v.problems(at: path) })
    }

    /// A nested section that may be absent (`led:`).
    public static func section<V: ConfigSection>(_ name: String, _ property: WritableKeyPath<Section, V?>) -> Self {
        Self(name, property, update: { v, c, k in if let new = try c.section(V.self, forKey: k) { v = new } },
             write: { v, c, k in if let v { try c.encode(section: v, forKey: k) } else { try c.encodeNil(forKey: k) } },
             problems: { v, path in v?.problems(at: path) ?? [] })
    }

    /// Sections by name (`patterns: {countdown: {on-ms: …}}`).
    public static func sections<V: ConfigSection>(_ name: String, _ property: WritableKeyPath<Section, [String: V]>) -> Self {
        Self(name, property, update: { v, c, k in if let new = try c.sections([String: V].self, forKey: k) { v = new } },
             write: { v, c, k in try c.encode(sections: v, forKey: k) },
             problems: { v, path in v.keys.sorted().flatMap { v[$0]!.problems(at: path + [$0]) } })
    }

    /// A list of sections (`contacts: [{name: …}]`).
    public static func sections<V: ConfigSection>(_ name: String, _ property: WritableKeyPath<Section, [V]>) -> Self {
        Self(name, property, update: { v, c, k in if let new = try c.sections([V].self, forKey: k) { v = new } },
             write: { v, c, k in try c.encode(sections: v, forKey: k) },
             problems: { v, path in v.enumerated().flatMap { $1.problems(at: path + [String($0)]) } })
    }

    /// A key read its own way (`uri: local` for `local:`, a line as a name or a number).
    public static func custom<V: Encodable>(_ name: String, _ property: WritableKeyPath<Section, V>,
                                            read: @escaping (KeyedDecodingContainer<ConfigKeyName>, ConfigKeyName) throws -> V?) -> Self {
        Self(name, property, read: read, write: { v, c, k in try c.encode(v, forKey: k) })
    }

    /// A key read and written its own way (a value that is not `Codable` as it stands).
    public static func custom<V>(_ name: String, _ property: WritableKeyPath<Section, V>,
                                 read: @escaping (KeyedDecodingContainer<ConfigKeyName>, ConfigKeyName) throws -> V?,
                                 write: @escaping (V, inout KeyedEncodingContainer<ConfigKeyName>, ConfigKeyName) throws -> Void) -> Self {
        Self(name, property, read: read, write: write)
    }

    static func outside<V>(_ v: V, _ range: ClosedRange<V>, _ unit: String) -> String {
        "\(v)\(unit) is outside \(range.lowerBound)...\(range.upperBound)\(unit)"
    }

    static func word<List: WordList>(_ w: String, _ list: List.Type, _ c: KeyedDecodingContainer<ConfigKeyName>,
                                     _ k: ConfigKeyName) throws -> List.Value {
        guard let value = List.value(named: w) else {
            throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: List.mismatch(w))
        }
        return value
    }
}

/// A key of the file as a `CodingKey`.
public struct ConfigKeyName: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ s: String) { stringValue = s }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

/// A section whose keys are its ``keys``: each declared once, read, written and range-checked
/// from there. What an empty section gives is `init()`; ``checks(at:)`` adds the rules that
/// need more than one key or more than a range (a URL, a file that must be readable).
public protocol KeyedSection: ConfigSection {
    init()
    static var keys: [ConfigKey<Self>] { get }
    /// The file's names this section reads: its keys' (default), and more where it reads more.
    static var keyNames: [String] { get }
    /// Problems beyond each key's own range and words, keys relative to `path`.
    func checks(at path: [String]) -> [ConfigProblem]
}

extension KeyedSection {
    public static var keyNames: [String] { keys.map(\.name) }

    /// The keys in `decoder` over `base` (default: what an empty section gives).
    package init(keysFrom decoder: any Decoder, over base: Self = Self()) throws {
        let c = try decoder.container(keyedBy: ConfigKeyName.self)
        self = base
        for key in Self.keys { try key.read(&self, c) }
    }

    package func encodeKeys(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ConfigKeyName.self)
        for key in Self.keys { try key.write(self, &c) }
    }

    public init(fromConfig decoder: any Decoder) throws { try self.init(keysFrom: decoder) }
    public func encodeConfig(to encoder: any Encoder) throws { try encodeKeys(to: encoder) }
    public func checks(at path: [String]) -> [ConfigProblem] { [] }

    /// The names of the keys whose values differ between `self` and `other`, in the order
    /// declared (a key whose value is not `Equatable` counts as changed only if its encoding
    /// would differ: every section and value type here is Equatable, so none does).
    public func keysChanged(since other: Self) -> [String] {
        Self.keys.filter { !$0.sameValue(self, other) }.map(\.name)
    }

    /// Every key's own problems (a range, in the order declared), then ``checks(at:)``.
    public func problems(at path: [String]) -> [ConfigProblem] {
        Self.keys.flatMap { $0.check(self, path) } + checks(at: path)
    }

    /// The file's name of the key declared for `property` (`\.alertTimeout` → `alert-timeout`),
    /// nil when no key sets it.
    public static func declaredName(of property: PartialKeyPath<Self>) -> String? {
        keys.first { $0.property == property }?.name
    }

    /// `path` and the key declared for `property`: a check names its key through the key's one
    /// declaration, so renaming a key renames every problem found at it. A property no key sets
    /// gives ``undeclaredMark`` and its key path (`ConfigKeyTests` fails on it).
    public static func at(_ path: [String], _ property: PartialKeyPath<Self>) -> [String] {
        path + [declaredName(of: property) ?? "\(undeclaredMark)\(property)"]
    }

    /// `path`, the key declared for `section`, and in it the key declared for `property`
    /// (`gpio.buzzer.tone-hz`).
    public static func at<Inner: KeyedSection>(_ path: [String], _ section: KeyPath<Self, Inner>,
                                               _ property: PartialKeyPath<Inner>) -> [String] {
        Inner.at(at(path, section), property)
    }

    /// The values of the keys declared secret that are set.
    public var secretValues: [String] {
        Self.keys.filter(\.isSecret).compactMap { $0.text(self) }.filter { !$0.isEmpty }
    }
}

extension KeyedSection where Self: Codable {
    public init(fromConfig decoder: any Decoder) throws { try self.init(keysFrom: decoder) }
    public func encodeConfig(to encoder: any Encoder) throws { try encodeKeys(to: encoder) }
    public init(from decoder: any Decoder) throws { try self.init(keysFrom: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeKeys(to: encoder) }
}

/// What stands in a problem's path for a property that no key declares (a check's mistake).
public let undeclaredMark = "(undeclared) "

/// The file's name for a Swift name: `alertTimeout` → `alert-timeout`, `keepGB` → `keep-gb`,
/// `allowPlainHTTP` → `allow-plain-http`. Keys are named like their properties.
public func kebabCase(_ name: String) -> String {
    let chars = Array(name)
    var out = ""
    for (i, ch) in chars.enumerated() {
        if ch.isUppercase, i > 0 {
            let previousLower = chars[i - 1].isLowercase || chars[i - 1].isNumber
            let nextLower = i + 1 < chars.count && chars[i + 1].isLowercase
            if previousLower || (chars[i - 1].isUppercase && nextLower) { out.append("-") }
        }
        out.append(contentsOf: ch.lowercased())
    }
    return out
}

extension Equatable {
    /// `self == other` when `other` is of the same type.
    fileprivate func isEqual(to other: Any) -> Bool { (other as? Self).map { $0 == self } ?? false }
}
