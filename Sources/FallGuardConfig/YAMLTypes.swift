import FallGuardConfigKeys
import Yams

/// The types of plain YAML scalars (`yes` a bool, `0x1F` an int, `~` null, `2026-11-26` a
/// timestamp), decided by hand-written rules instead of Yams' default resolver.
///
/// Why: `Resolver.default` compiles seven `NSRegularExpression`s the first time anything
/// refers to it (any `Tag.implicit`, any `Node("text")`), and through them the bridge loaded
/// ICU's regular-expression engine and its Unicode property tables at start-up, resident for
/// the rest of its life (README, "Memory"). So the configuration is composed with
/// `Resolver.basic` (no rules) and every node is then given its type here, with Yams'
/// constructor, so that nothing downstream resolves a tag again.
///
/// The rules are Yams' `Resolver.default` patterns (YAML 1.1 core types) written out, tried in
/// the same order; `YAMLTypesTests` checks them against Yams' own resolver string by string.
/// Mapping keys are strings whatever they look like: they are names, and a key is looked up by
/// its text (Yams' `mapping["on"]` resolves the looked-up key with the mapping's resolver).
enum YAMLTypes {
    /// The YAML type of a plain (unquoted, untagged) scalar.
    static func name(ofPlain s: String) -> Tag.Name {
        let b = Array(s.utf8)
        if isBool(b) { return .bool }
        if isInt(b) { return .int }
        if isFloat(b) { return .float }
        if b == [0x3C, 0x3C] { return .merge }            // <<
        if isNull(b) { return .null }
        if isTimestamp(b) { return .timestamp }
        if b == [0x3D] { return .value }                   // =
        return .str
    }

    /// `node` with every scalar typed and every tag resolving without Yams' default resolver.
    static func typed(_ node: Node, isKey: Bool = false) -> Node {
        switch node {
        case let .scalar(s):
            let given = s.tag.rawValue
            let name: Tag.Name = given == Tag.Name.implicit.rawValue
                ? (isKey ? .str : Self.name(ofPlain: s.string))
                : (given == Tag.Name.nonSpecific.rawValue ? .str : Tag.Name(rawValue: given))
            return .scalar(Node.Scalar(s.string, tag(name), s.style, s.mark, s.anchor))
        case let .mapping(m):
            return .mapping(Node.Mapping(m.map { (typed($0.key, isKey: true), typed($0.value)) },
                                         collectionTag(m.tag), m.style, m.mark, m.anchor))
        case let .sequence(s):
            return .sequence(Node.Sequence(s.map { typed($0) }, collectionTag(s.tag), s.style, s.mark, s.anchor))
        case .alias:
            return node
        }
    }

    /// The names in every mapping of `node` by key path, for ``MappingKeys``.
    static func mappingKeys(of node: Node) -> MappingKeys {
        var names: [String: [String]] = [:]
        func walk(_ n: Node, _ path: [String]) {
            switch n {
            case let .mapping(m):
                let keys = m.compactMap { $0.key.string }
                names[MappingKeys.path(path)] = keys
                for pair in m { if let k = pair.key.string { walk(pair.value, path + [k]) } }
            case let .sequence(s):
                for (i, item) in s.enumerated() { walk(item, path + [String(i)]) }
            default:
                break
            }
        }
        walk(node, [])
        return MappingKeys(names: names)
    }

    /// A scalar of plain text, typed as a plain scalar with that text would be.
    static func plain(_ text: String, isKey: Bool = false) -> Node {
        .scalar(Node.Scalar(text, tag(isKey ? .str : name(ofPlain: text)), .plain))
    }

    /// An empty mapping.
    static func emptyMapping(style: Node.Mapping.Style = .any, mark: Mark? = nil) -> Node.Mapping {
        Node.Mapping([], tag(.implicit), style, mark)
    }

    /// A new tag each time: Yams resolves an implicit tag by changing the tag object itself.
    static func tag(_ name: Tag.Name) -> Tag { Tag(name, .basic, .default) }

    /// A mapping's or list's tag stays implicit (Yams' decoder adds a `<<tag>>` key to a mapping
    /// whose tag is not), resolving with the basic resolver to `map` or `seq`.
    private static func collectionTag(_ given: Tag) -> Tag {
        let raw = given.rawValue
        return tag(raw == Tag.Name.implicit.rawValue || raw == Tag.Name.nonSpecific.rawValue ? .implicit : Tag.Name(rawValue: raw))
    }

    // MARK: the rules, on the UTF-8 bytes (every class in them is ASCII)

    private static let bools: Set<String> = ["yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE",
                                             "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"]

    private static func isBool(_ b: [UInt8]) -> Bool { b.count <= 5 && bools.contains(String(decoding: b, as: UTF8.self)) }

    private static func isNull(_ b: [UInt8]) -> Bool {
        b.isEmpty || b == [0x7E] || ["null", "Null", "NULL"].contains(String(decoding: b, as: UTF8.self))
    }

    private static func digit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    private static func sign(_ c: UInt8) -> Bool { c == 0x2B || c == 0x2D }
    private static let underscore: UInt8 = 0x5F, colon: UInt8 = 0x3A, dot: UInt8 = 0x2E

    /// A cursor over the bytes for the patterns below.
    private struct Scan {
        let b: [UInt8]
        var i = 0
        var atEnd: Bool { i == b.count }
        var next: UInt8? { i < b.count ? b[i] : nil }
        mutating func take(_ c: UInt8) -> Bool { if next == c { i += 1; return true }; return false }
        mutating func take(where p: (UInt8) -> Bool) -> Bool { if let c = next, p(c) { i += 1; return true }; return false }
        /// Zero or more bytes that satisfy `p`; how many.
        @discardableResult mutating func many(_ p: (UInt8) -> Bool) -> Int { let s = i; while take(where: p) {}; return i - s }
        mutating func sign() { _ = take(where: YAMLTypes.sign) }
        /// `(?::[0-5]?[0-9])+`: a colon and one digit, or a colon, 0-5 and a digit; at least once.
        mutating func sexagesimal() -> Bool {
            var groups = 0
            while next == YAMLTypes.colon {
                let start = i
                i += 1
                if let c = next, c >= 0x30 && c <= 0x35, i + 1 < b.count, YAMLTypes.digit(b[i + 1]) {
                    i += 2
                } else if take(where: YAMLTypes.digit) {
                } else { i = start; break }
                groups += 1
            }
            return groups > 0
        }
    }

    /// `[-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+`
    private static func isInt(_ b: [UInt8]) -> Bool {
        func alternative(_ body: (inout Scan) -> Bool) -> Bool {
            var s = Scan(b: b)
            s.sign()
            return body(&s) && s.atEnd
        }
        let digitOrUnderscore = { (c: UInt8) in digit(c) || c == underscore }
        return alternative { s in s.take(0x30) && s.take(0x62) && s.many { $0 == 0x30 || $0 == 0x31 || $0 == underscore } > 0 }
            || alternative { s in s.take(0x30) && { _ = s.take(0x6F); return true }() && s.many { ($0 >= 0x30 && $0 <= 0x37) || $0 == underscore } > 0 }
            || alternative { s in s.take(0x30) || (s.take { $0 >= 0x31 && $0 <= 0x39 } && s.many(digitOrUnderscore) >= 0) }
            || alternative { s in
                s.take(0x30) && s.take(0x78)
                    && s.many { digit($0) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) || $0 == underscore } > 0 }
            || alternative { s in s.take { $0 >= 0x31 && $0 <= 0x39 } && s.many(digitOrUnderscore) >= 0 && s.sexagesimal() }
    }

    /// `[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)? | \.[0-9_]+([eE][-+][0-9]+)?
    ///  | [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)`
    private static func isFloat(_ b: [UInt8]) -> Bool {
        let digitOrUnderscore = { (c: UInt8) in digit(c) || c == underscore }
        func exponent(_ s: inout Scan, signRequired: Bool) -> Bool {
            guard s.take(where: { $0 == 0x65 || $0 == 0x45 }) else { return true }   // none: fine
            if signRequired { guard s.take(where: sign) else { return false } } else { s.sign() }
            return s.many(digit) > 0
        }
        var s = Scan(b: b)
        s.sign()
        if s.take(where: digit) {
            s.many(digitOrUnderscore)
            var t = s
            if t.sexagesimal(), t.take(dot) {                     // 190:20:30.15
                t.many(digitOrUnderscore)
                if t.atEnd { return true }
            }
            if s.take(dot) { s.many(digitOrUnderscore) }
            return exponent(&s, signRequired: false) && s.atEnd
        }
        guard s.take(dot) else { return false }
        let text = String(decoding: b[s.i...], as: UTF8.self)
        if ["inf", "Inf", "INF"].contains(text) { return true }
        if s.i == 1, ["nan", "NaN", "NAN"].contains(text) { return true }   // no sign before .nan
        guard s.i == 1, s.many(digitOrUnderscore) > 0 else { return false }  // `.5`: no sign either
        return exponent(&s, signRequired: true) && s.atEnd
    }

    /// `[0-9]{4}-[0-9]{2}-[0-9]{2}
    ///  | [0-9]{4}-[0-9][0-9]?-[0-9][0-9]?([Tt]|[ \t]+)[0-9][0-9]?:[0-9]{2}:[0-9]{2}(\.[0-9]*)?([ \t]*(Z|[-+][0-9][0-9]?(:[0-9]{2})?))?`
    private static func isTimestamp(_ b: [UInt8]) -> Bool {
        var s = Scan(b: b)
        func digits(_ n: Int) -> Bool { (0..<n).allSatisfy { _ in s.take(where: digit) } }
        func oneOrTwo() -> Bool { guard s.take(where: digit) else { return false }; _ = s.take(where: digit); return true }
        let blank = { (c: UInt8) in c == 0x20 || c == 0x09 }
        guard digits(4), s.take(0x2D) else { return false }
        let dateStart = s.i
        if digits(2), s.take(0x2D), digits(2), s.atEnd { return true }
        s.i = dateStart
        guard oneOrTwo(), s.take(0x2D), oneOrTwo() else { return false }
        guard s.take(where: { $0 == 0x54 || $0 == 0x74 }) || s.many(blank) > 0 else { return false }
        guard oneOrTwo(), s.take(colon), digits(2), s.take(colon), digits(2) else { return false }
        if s.take(dot) { s.many(digit) }
        if s.atEnd { return true }
        s.many(blank)
        if s.take(0x5A) { return s.atEnd }
        guard s.take(where: sign), oneOrTwo() else { return false }
        if s.take(colon) { guard digits(2) else { return false } }
        return s.atEnd
    }
}
