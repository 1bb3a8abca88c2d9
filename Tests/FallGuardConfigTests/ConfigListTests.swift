import FallGuardConfig
import FallGuardCore
import Testing
import FallGuardTestSupport

/// A section holding a list of mappings, as `contacts:` will.
private struct ContactsSection: ConfigSection, Codable, Equatable {
    struct Contact: Codable, Equatable {
        var name: String
        var phone: String
        var priority: Int
    }
    var contacts: [Contact]

    init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        var all: [Contact] = []
        while !c.isAtEnd { all.append(try c.decode(Contact.self)) }
        contacts = all
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(contentsOf: contacts)
    }

    func problems(at path: [String]) -> [ConfigProblem] {
        contacts.enumerated().compactMap { i, c in
            c.phone.hasPrefix("+") ? nil : ConfigProblem(path + [String(i), "phone"], "'\(c.phone)' is not an E.164 number (+ and country code)")
        }
    }
}

/// The whole file as one struct.
private struct WholeFile: ConfigSection, Codable {
    var log = LogSection()
    var metrics = MetricsSection()

    enum CodingKeys: String, CodingKey { case log, metrics }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        log = try c.decodeIfPresent(LogSection.self, forKey: .log) ?? LogSection()
        metrics = try c.decodeIfPresent(MetricsSection.self, forKey: .metrics) ?? MetricsSection()
    }

    func problems(at path: [String]) -> [ConfigProblem] {
        log.problems(at: path + ["log"]) + metrics.problems(at: path + ["metrics"])
    }
}

@Suite("Configuration lists and whole-file decoding")
struct ConfigListTests {
    @Test func listItemsAreAddressedByIndexWithTheirLines() {
        var doc = ConfigDocument(yaml: """
            contacts:
              - name: Ana
                phone: "+34600000001"
                priority: 1
              - name: Ben
                phone: "0600 000 002"
                priority: first
              - name: Cy
                phnoe: "+34600000003"
                phone: "+34600000003"
                priority: 3
            """, path: "c.yaml", environment: [:])
        let section = doc.section(ContactsSection.self, at: "contacts")
        // A list item with a bad value cannot take a default (priority has none): the section
        // is not built, and its unknown keys and value checks wait for the type error's fix.
        #expect(doc.finish().map(\.description) == ["c.yaml:7: contacts.1.priority: expected a whole number, found 'first'"])
        #expect(section == nil)
    }

    @Test func unknownKeysAndValueChecksInListsPointAtTheItem() {
        var doc = ConfigDocument(yaml: """
            contacts:
              - name: Ana
                phone: "+34600000001"
                priority: 1
              - name: Ben
                phone: "0600 000 002"
                priority: 2
              - name: Cy
                phnoe: "+34600000003"
                phone: "+34600000003"
                priority: 3
            """, path: "c.yaml", environment: [:])
        let section = doc.section(ContactsSection.self, at: "contacts")
        #expect(section?.contacts.count == 3)
        #expect(doc.finish().map(\.description) == [
            "c.yaml:6: contacts.1.phone: '0600 000 002' is not an E.164 number (+ and country code)",
            "c.yaml:9: contacts.2.phnoe: unknown key 'phnoe' (did you mean 'phone'?)",
        ])
    }

    @Test func wholeFileDecodingReportsUnknownTopLevelKeys() {
        var doc = ConfigDocument(yaml: "log:\n  level: debug\nmetric:\n  enabled: false\n", path: "w.yaml", environment: [:])
        let whole = doc.decodeWhole(WholeFile.self)
        #expect(whole?.log.level == .debug)
        #expect(doc.finish().map(\.description) == ["w.yaml:3: metric: unknown key 'metric' (did you mean 'metrics'?)"])
    }
}
