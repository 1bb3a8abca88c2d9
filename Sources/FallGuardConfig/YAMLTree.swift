import FallGuardConfigKeys
import Yams

/// Walking and editing a composed YAML tree by key path (`["channels", "sms", "url"]`;
/// a list item is its index as a string).
extension Node {
    /// The value at `path`, if every step exists.
    func value(at path: ArraySlice<String>) -> Node? {
        guard let step = path.first else { return self }
        return child(step)?.value.value(at: path.dropFirst())
    }

    /// The key node and value of one step down: a mapping key or a list index.
    func child(_ step: String) -> (key: Node?, value: Node)? {
        switch self {
        case let .mapping(m):
            // The last one wins, as in Yams' own lookup (duplicates are rejected earlier anyway).
            return m.reversed().first { $0.key.string == step }.map { ($0.key, $0.value) }
        case let .sequence(s):
            guard let i = Int(step), s.indices.contains(i) else { return nil }
            return (nil, s[i])
        default:
            return nil
        }
    }

    /// Where to point a person for `path`: the value's line for a single value (the same line
    /// as its key, or the credentials file's line when it came from there), the key's line for
    /// a mapping or list, else the deepest part of the path that exists.
    func mark(for path: [String]) -> Mark? {
        var node = self
        var best = path.isEmpty ? node.mark : nil   // a section absent from the file has no line
        for step in path {
            guard let (key, value) = node.child(step) else { break }
            if case .scalar = value { best = value.mark ?? key?.mark ?? best } else { best = key?.mark ?? value.mark ?? best }
            node = value
        }
        return best
    }

    /// This tree without the value at `path` (a mapping key is dropped, a list item is left
    /// as it is). Returns nil when there was nothing to remove.
    func removing(_ path: ArraySlice<String>) -> Node? {
        guard let step = path.first else { return nil }
        switch self {
        case var .mapping(m):
            let pairs = Array(m)
            guard let i = pairs.lastIndex(where: { $0.key.string == step }) else { return nil }
            if path.count == 1 {
                var kept = pairs
                kept.remove(at: i)
                return .mapping(Node.Mapping(kept.map { ($0.key, $0.value) }, m.tag, m.style, m.mark))
            }
            guard let inner = pairs[i].value.removing(path.dropFirst()) else { return nil }
            m[pairs[i].key] = inner
            return .mapping(m)
        case var .sequence(s):
            guard let i = Int(step), s.indices.contains(i), path.count > 1,
                  let inner = s[i].removing(path.dropFirst()) else { return nil }
            s[i] = inner
            return .sequence(s)
        default:
            return nil
        }
    }

    /// This tree with `value` placed at `path`, creating mappings on the way (used to lay a
    /// credentials file over the configuration). In a list, a step is an item's index (`0`) or
    /// the `user` of a mapping item (`staff: {anna: {password: …}}` over `staff: [{user: anna, …}]`):
    /// the credentials file fills in an item; it never replaces the list.
    func setting(_ value: Node, at path: ArraySlice<String>) -> Node {
        guard let step = path.first else { return value }
        if case var .sequence(s) = self, !path.dropFirst().isEmpty,
           let i = Int(step).flatMap({ s.indices.contains($0) ? $0 : nil })
            ?? s.firstIndex(where: { $0.child("user")?.value.string == step }) {
            s[i] = s[i].setting(value, at: path.dropFirst())
            return .sequence(s)
        }
        var m = mapping ?? YAMLTypes.emptyMapping(style: .block, mark: mark)
        let existingKey = Array(m.keys).last { $0.string == step }
        let inner = (existingKey.flatMap { m[$0] } ?? .mapping(YAMLTypes.emptyMapping())).setting(value, at: path.dropFirst())
        m[existingKey ?? YAMLTypes.plain(step, isKey: true)] = inner
        return .mapping(m)
    }

    /// How many nodes the tree has with every alias expanded, counting no further than just
    /// past `budget` (so a nested-alias bomb costs at most `budget` steps).
    func expandedCount(upTo budget: Int) -> Int {
        var count = 0
        countNodes(&count, budget: budget)
        return count
    }

    private func countNodes(_ count: inout Int, budget: Int) {
        count += 1
        guard count <= budget else { return }
        switch self {
        case let .mapping(m):
            for pair in m where count <= budget {
                pair.key.countNodes(&count, budget: budget)
                pair.value.countNodes(&count, budget: budget)
            }
        case let .sequence(s):
            for item in s where count <= budget { item.countNodes(&count, budget: budget) }
        default:
            break
        }
    }

    /// Every scalar leaf with its path.
    func leaves(at prefix: [String] = []) -> [(path: [String], node: Node)] {
        switch self {
        case let .mapping(m):
            return m.flatMap { pair in pair.key.string.map { pair.value.leaves(at: prefix + [$0]) } ?? [] }
        case let .sequence(s):
            return s.enumerated().flatMap { $0.element.leaves(at: prefix + [String($0.offset)]) }
        default:
            return [(prefix, self)]
        }
    }

    /// Replaces every scalar leaf through `transform` (nil keeps it).
    func mappingLeaves(at prefix: [String] = [], _ transform: ([String], Node.Scalar) -> Node.Scalar?) -> Node {
        switch self {
        case var .mapping(m):
            for key in Array(m.keys) {
                guard let name = key.string, let v = m[key] else { continue }
                m[key] = v.mappingLeaves(at: prefix + [name], transform)
            }
            return .mapping(m)
        case var .sequence(s):
            for i in s.indices { s[i] = s[i].mappingLeaves(at: prefix + [String(i)], transform) }
            return .sequence(s)
        case let .scalar(sc):
            return transform(prefix, sc).map { .scalar($0) } ?? self
        default:
            return self
        }
    }

    /// How a value reads in an error: a short quoted scalar, or what kind of node it is.
    var shortDescription: String {
        switch self {
        case let .scalar(s):
            if s.string.isEmpty || s.string == "~" || s.string == "null" { return "nothing (null)" }
            let text = s.string.count > 40 ? String(s.string.prefix(40)) + "…" : s.string
            return "'\(text)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }
}
