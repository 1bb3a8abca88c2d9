import FallGuardConfig
import Testing
import FallGuardTestSupport

/// fuzz/corpus/config, the seeds and what fuzzing found (bench/fuzz.sh), loaded from their
/// text as check-config loads a file.
@Suite("fuzz/corpus/config")
struct ConfigFuzzCorpusTests {
    static func load(_ name: String, _ bytes: [UInt8]) -> [ConfigDiagnostic] {
        DaemonConfiguration.load(yaml: String(decoding: bytes, as: UTF8.self), path: "/nonexistent/fuzz/\(name)",
                                 environment: ExampleFileTests.environment).1
    }

    @Test func everyFileLoadsWithDiagnosticsThatSayWhatIsWrong() {
        for (name, bytes) in fuzzCorpus("config") {
            for d in Self.load(name, bytes) { #expect(!d.problem.message.isEmpty, "\(name): \(d)") }
        }
    }

    @Test func theSeedsLoadAsWritten() throws {
        let corpus = Dictionary(uniqueKeysWithValues: fuzzCorpus("config").map { ($0.name, $0.bytes) })
        for name in ["example.yaml", "emulated-pi.yaml", "twilio-env.yaml"] {
            #expect(Self.load(name, try #require(corpus[name])).map(\.description) == [], "\(name)")
        }
        let mistakes = Self.load("mistakes.yaml", try #require(corpus["mistakes.yaml"]))
        #expect(mistakes.filter(\.isError).compactMap(\.line) == [2, 3, 4, 5], "\(mistakes)")
    }
}
