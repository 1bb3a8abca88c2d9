/// Small helpers every section's `init(from:)` uses: a default for a missing key, and a
/// fixed set of words with an error that lists them.
extension KeyedDecodingContainer {
    /// The value at `key`, or `defaultValue` when the key is missing or null.
    func value<T: Decodable>(_ key: Key, default defaultValue: T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? defaultValue
    }
}

extension KeyedEncodingContainer {
    /// Encodes an optional as `null` when nil, so the key survives the loader's round trip
    /// (a key missing from the re-encoded value would be reported as unknown).
    mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}

/// A setting that is one word out of a fixed list (`mode: auto`); a wrong word is reported
/// with the list and the closest choice.
public protocol ConfigChoice: RawRepresentable, CaseIterable, Codable, Sendable where RawValue == String {}

extension ConfigChoice {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let word = try c.decode(String.self)
        guard let v = Self(rawValue: word) else {
            let all = Self.allCases.map(\.rawValue)
            let near = KeySuggestion.closest(to: word, in: all).map { " (did you mean '\($0)'?)" } ?? ""
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected one of \(all.joined(separator: ", ")), found '\(word)'\(near)")
        }
        self = v
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// A fixed list of words, each naming a value.
protocol WordList {
    associatedtype Value: Equatable & Sendable
    /// How the error about a wrong word names the setting.
    static var name: String { get }
    static var words: [(word: String, value: Value)] { get }
}

/// A setting that is one word naming a runtime value (`bias: pull-up`, `security: tls`): the
/// words live here, the values in the module that uses them. A wrong word fails decoding as a
/// raw-value enum's would.
struct Word<List: WordList>: Codable {
    var value: List.Value

    init(_ value: List.Value) { self.value = value }

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let word = try c.decode(String.self)
        guard let v = List.words.first(where: { $0.word == word })?.value else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "Cannot initialize \(List.name) from invalid String value \(word)")
        }
        value = v
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(List.words.first { $0.value == value }?.word ?? "")
    }
}
