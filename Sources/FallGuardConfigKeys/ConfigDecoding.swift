/// Helpers the key declarations (``ConfigKey``) use to write a key.
extension KeyedEncodingContainer {
    /// Encodes an optional as `null` when nil, so the key survives the loader's round trip
    /// (a key missing from the re-encoded value would be reported as unknown).
    package mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}

/// The words a setting may be (`mode: auto`, `bias: pull-up`, `type: twilio-sms`), each naming
/// a value; the values may live in the module that uses them. Every word-valued key is read
/// through one of these: a wrong word is reported with the list and the closest word
/// (``ConfigKey/word(_:_:_:)``).
package protocol WordList {
    associatedtype Value: Sendable
    /// In the order the message lists them.
    static var words: [(word: String, value: Value)] { get }
}

extension WordList {
    /// The value `word` names, nil when it names none.
    package static func value(named word: String) -> Value? { words.first { $0.word == word }?.value }

    /// What is said of a word not in the list: the list (and what else the key takes, such as
    /// "a CPU number"), and the closest word when it is close enough to be a typo.
    package static func mismatch(_ word: String, orElse other: String? = nil) -> String {
        let all = words.map(\.word)
        let near = KeySuggestion.closest(to: word, in: all).map { " (did you mean '\($0)'?)" } ?? ""
        return "expected one of \(all.joined(separator: ", "))\(other.map { " or \($0)" } ?? ""), found '\(word)'\(near)"
    }
}

extension WordList where Value: Equatable {
    /// The word for `value`.
    package static func word(for value: Value) -> String { words.first { $0.value == value }?.word ?? "" }
}

/// The words of an enum whose raw values are its words (`SensorSection.Mode`, `AcknowledgeMode`).
package enum RawWords<Value: RawRepresentable & CaseIterable & Equatable & Sendable>: WordList where Value.RawValue == String {
    package static var words: [(word: String, value: Value)] { Value.allCases.map { ($0.rawValue, $0) } }
}

extension KeyedEncodingContainer {
    /// Encodes `value` as its word in `list`.
    package mutating func encode<List: WordList>(_ value: List.Value, as list: List.Type, forKey key: Key) throws where List.Value: Equatable {
        try encode(List.word(for: value), forKey: key)
    }
}
