import FallGuardCore
@testable import FallGuardFieldTest
import Foundation
import Testing

/// Issue 36: an incident taken before the clock was synchronised says so.
@Suite struct IncidentClockTests {
    static func record() -> IncidentRecord {
        IncidentRecord(id: "FG-1", kind: "fall-suspected", eventTime: 10, eventWallTime: "2026-11-24T01:00:00Z",
                       before: 30, after: 30, detector: .init(name: "multiphase", settings: [:], software: "t"), detection: nil)
    }

    @Test func theRecordKeepsWhetherTheClockWasSynchronised() throws {
        var r = Self.record()
        r.clockSynchronized = false
        let json = String(decoding: try JSONEncoder().encode(r), as: UTF8.self)
        #expect(json.contains("\"clock_synchronized\":false"), "\(json)")
        #expect(try JSONDecoder().decode(IncidentRecord.self, from: Data(json.utf8)).clockSynchronized == false)
        #expect(r.clockMark == " (clock not synchronised)")
        r.clockSynchronized = true
        #expect(r.clockMark == "")
        // A record written before the field existed reads as not known, and is not marked.
        let old = json.replacingOccurrences(of: "\"clock_synchronized\":false,", with: "")
            .replacingOccurrences(of: ",\"clock_synchronized\":false", with: "")
        let read = try JSONDecoder().decode(IncidentRecord.self, from: Data(old.utf8))
        #expect(read.clockSynchronized == nil && read.clockMark == "", "\(old)")
    }
}
