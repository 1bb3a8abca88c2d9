@testable import FallGuardConfig
import Testing
import Yams

/// `YAMLTypes` types plain scalars by hand so that the daemon never compiles Yams' regular
/// expressions; these tests hold its rules to Yams' own `Resolver.default`.
@Suite("YAML scalar types without regular expressions")
struct YAMLTypesTests {
    static func yams(_ s: String) -> Yams.Tag.Name { Resolver.default.resolveTag(of: Node(s)) }

    @Test("the YAML 1.1 edge cases type as Yams types them")
    func edgeCases() {
        let cases = [
            "", "~", "null", "Null", "NULL", "nULL", "yes", "Yes", "YES", "yEs", "no", "on", "OFF", "y", "n", "true", "False",
            "0", "-0", "+0", "00", "01", "08", "0o17", "0o", "0o8", "0b101", "0b", "0b2", "0x1F", "0xg", "0x", "-0x_",
            "1_000", "1__", "_1", "190:20:30", "190:60", "190:5", "190:05:", "1:2:3", "0:30", "-1:30",
            "1.5", "1.", ".5", "._", "-.5", "+.5", "1e5", "1e", "1e+5", "1.5E-3", ".5e5", ".5e+5", "1.5e+", "190:20:30.15",
            "190:20:30.", "1:2.5", ".inf", "-.inf", "+.Inf", ".INF", ".iNf", ".nan", ".NaN", "-.nan", "inf", "nan",
            "<<", "<", "=", "==", "2026-11-26", "2026-1-2", "2026-11-26T22:10:00", "2026-11-26t22:10:00Z",
            "2026-11-26 22:10:00.25 +01:00", "2026-11-26 \t 2:10:00 -5", "2026-11-26 22:10:00 ", "2026-11-26T22:10:00+1:0",
            "2026-11-26T22:10", "2026-11-26T22:10:00.Z", "2026-11-26T22:10:00 Z", "20261-11-26", "12.5 %", "GPIO18",
            "mqtt://host:1883", "bufered", "0 0", "-", "+", "e5", "1e5.0", "１２", "٣",
        ]
        for s in cases {
            #expect(YAMLTypes.name(ofPlain: s) == Self.yams(s), "'\(s)'")
        }
    }

    @Test("200,000 random strings over the rules' alphabet type as Yams types them")
    func randomStrings() {
        let alphabet = Array("0123456789_+-.:eExXbBoOaAfFnNiItTZzlLsSuU<=~ \t")
        var rng = SplitMix(seed: 20261126)
        var mismatches: [String] = []
        for _ in 0..<200_000 {
            let length = Int(rng.next() % 13)
            let s = String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
            if YAMLTypes.name(ofPlain: s) != Self.yams(s) { mismatches.append(s) }
        }
        // Strings that look like numbers and dates, built from their parts.
        let parts = ["0", "1", "9", "12", "59", "60", "_", ":", ".", "e", "E", "+", "-", "0x", "0b", "0o", "-", "T", " ", "Z"]
        for _ in 0..<100_000 {
            let s = (0..<Int(rng.next() % 7)).map { _ in parts[Int(rng.next() % UInt64(parts.count))] }.joined()
            if YAMLTypes.name(ofPlain: s) != Self.yams(s) { mismatches.append(s) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(20).map { "'\($0)': ours \(YAMLTypes.name(ofPlain: $0).rawValue), Yams \(Self.yams($0).rawValue)" })")
    }

    @Test("a composed file keeps its types: quoted is text, keys are names, explicit tags stay")
    func typedTree() throws {
        let text = """
            a: yes
            b: "yes"
            c: 0x10
            d: ~
            e: !!str 12
            on: 1.5
            f: [1, two, '3']
            """
        let node = try #require(try Yams.compose(yaml: text, .basic).map { YAMLTypes.typed($0) })
        let expected = try #require(try Yams.compose(yaml: text))
        for key in ["a", "b", "c", "d", "e", "on"] {
            #expect(node[key]?.tag == expected[key]?.tag, "\(key)")
            #expect(node[key]?.string == expected[key]?.string, "\(key)")
        }
        #expect(node["f"]?.sequence?.map(\.tag.rawValue) == expected["f"]?.sequence?.map(\.tag.rawValue))
        #expect(node["a"]?.bool == true && node["b"]?.bool == nil && node["c"]?.int == 16 && node["d"]?.null != nil)
        // Keys are looked up by their text, including one that reads as a bool.
        #expect(node["on"]?.float == 1.5)
        struct Shape: Decodable { let a: Bool; let b: String; let c: Int; let d: Int?; let e: String; let f: [String] }
        let decoded = try YAMLDecoder().decode(Shape.self, from: node)
        #expect(decoded.a && decoded.b == "yes" && decoded.c == 16 && decoded.d == nil && decoded.e == "12" && decoded.f == ["1", "two", "3"])
    }
}

/// A small seeded generator, so that a failure names strings that come back on the next run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
