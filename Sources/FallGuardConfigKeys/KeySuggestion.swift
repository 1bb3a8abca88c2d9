/// "Did you mean …?" for a misspelt key: the closest known key by edit distance, when it is
/// close enough to be a likely typo.
package enum KeySuggestion {
    /// The message for an unknown `key` among `known` keys.
    package static func unknownKeyMessage(_ key: String, known: [String]) -> String {
        if let near = closest(to: key, in: known) {
            return "unknown key '\(key)' (did you mean '\(near)'?)"
        }
        let list = known.sorted()
        return list.isEmpty ? "unknown key '\(key)'" : "unknown key '\(key)' (known: \(list.joined(separator: ", ")))"
    }

    /// The known key with the smallest edit distance, if that distance is at most a third of
    /// the key's length (at least 2); ties go to the first in `known`.
    package static func closest(to key: String, in known: [String]) -> String? {
        let limit = max(2, key.count / 3)
        var best: (String, Int)?
        for k in known {
            let d = editDistance(key.lowercased(), k.lowercased())
            if d <= limit, d < (best?.1 ?? .max) { best = (k, d) }
        }
        return best?.0
    }

    /// Levenshtein distance (insertions, deletions, substitutions), over Unicode scalars.
    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let above = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
