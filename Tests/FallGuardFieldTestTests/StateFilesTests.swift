import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// Issue 28: the files the daemon and the field-test commands write and read.
@Suite struct StateFilesTests {
    static let detector = IncidentRecord.DetectorInfo(name: "multiphase", settings: ["impact": 2], software: "fallguard test")

    static func record(_ id: String, before: Double = 5, after: Double = 5) -> IncidentRecord {
        IncidentRecord(id: id, kind: "fall-suspected", eventTime: 10, eventWallTime: "2026-11-24T01:00:00Z",
                       before: before, after: after, detector: detector, detection: nil)
    }

    /// Item 13: an id from the command line, the page or a record on disk never names a path.
    @Test func incidentIdsAreCheckedWhereverTheyEnter() throws {
        let dir = TempDirectory("archive")
        let archive = IncidentArchive(folder: dir.path + "/state/incidents")
        try FileManager.default.createDirectory(atPath: dir.path + "/state", withIntermediateDirectories: true)
        try archive.write(Self.record("FG-1"))
        // A record whose id names another path, in a folder of the archive.
        try FileManager.default.createDirectory(atPath: archive.path(of: "FG-2"), withIntermediateDirectories: true)
        let forged = try JSONEncoder().encode(Self.record("../../outside"))
        try forged.write(to: URL(fileURLWithPath: archive.recordPath(of: "FG-2")))
        let entry = IncidentLabelEntry(label: .fall, by: "tester", at: "2026-11-25T09:00:00Z")
        #expect(throws: (any Error).self) { try archive.record("FG-2") }
        #expect(throws: (any Error).self) { try archive.label("FG-2", entry) }
        #expect(throws: (any Error).self) { try archive.record("../../outside") }
        #expect(throws: (any Error).self) { try archive.label("../FG-1", entry) }
        #expect(throws: (any Error).self) { try archive.write(Self.record("../escape")) }
        #expect(throws: (any Error).self) { try archive.writeSignal("t_s,x_g,y_g,z_g\n", of: "..") }
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/outside") && !FileManager.default.fileExists(atPath: dir.path + "/escape"))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/incident.json"))
        let listed = archive.records()
        #expect(listed.records.map(\.id) == ["FG-1"])
        #expect(listed.unreadable.count == 1 && listed.unreadable[0].contains("FG-2"), "\(listed.unreadable)")
        for good in ["FG-1", "FG-fault-3", "pi_2.FG-10"] { #expect(IncidentArchive.isValidID(good)) }
        for bad in ["", ".", "..", "../x", "a/b", ".hidden", String(repeating: "a", count: 65), "FG 1", "FG-é"] {
            #expect(!IncidentArchive.isValidID(bad), "\(bad)")
        }
    }

    /// `fallguard label ../../outside fall` is refused before anything is read (exit 64).
    @Test func theLabelCommandRefusesAPath() throws {
        let dir = TempDirectory("archive")
        let r = try fallguard(["label", "../../outside", "fall", "--state", dir.path])
        #expect(r.status == 64 && r.stderr.contains("not an incident id"), "\(r.status) \(r.stderr)")
    }

    /// Item 12: a folder another user owns or may write is not used; a planted link is never
    /// followed by a write; a folder this user owns is made 0700.
    @Test func foldersOthersCanWriteAreRefusedAndLinksAreNotFollowed() throws {
        let dir = TempDirectory("state")
        let state = dir.path + "/state", victim = dir.path + "/victim"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try "mine\n".write(toFile: victim, atomically: false, encoding: .utf8)
        #expect(chmod(state, 0o777) == 0)
        #expect(StateFiles.prepare(state) == nil, "this user's own folder is tightened")
        let mode = try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        // A link where the temporary goes, and where the file goes.
        #expect(symlink(victim, state + "/status.json.tmp") == 0)
        try StateFiles.writeAtomically(Data("{}".utf8), to: state + "/status.json")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "mine\n")
        #expect(symlink(victim, state + "/incidents.jsonl") == 0)
        #expect(StateFiles.open(state + "/incidents.jsonl", O_WRONLY | O_APPEND | O_CREAT) == -1 && errno == ELOOP)
        #expect(!StateFiles.isRegularOrAbsent(state + "/incidents.jsonl") && StateFiles.isRegularOrAbsent(state + "/none"))
        // Another user's folder, writable by anyone: refused, and left as it is.
        let foreign = dir.path + "/foreign"
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        #expect(chown(foreign, 65534, 65534) == 0 && chmod(foreign, 0o777) == 0)
        #expect(StateFiles.prepare(foreign)?.contains("owned by uid 65534") == true)
        #expect((try FileManager.default.attributesOfItem(atPath: foreign)[.posixPermissions] as? Int) == 0o777)
        #expect(symlink(foreign, dir.path + "/linked") == 0)
        #expect(StateFiles.distrust(of: dir.path + "/linked")?.contains("symbolic link") == true)
        let archive = IncidentArchive(folder: foreign + "/incidents")
        #expect(throws: (any Error).self) { try archive.write(Self.record("FG-1")) }
        #expect(!FileManager.default.fileExists(atPath: foreign + "/incidents"))
    }

    /// Item 14: a recording that inflates past the row limit is refused (it was read whole:
    /// 2 GB from a 2 MB file), and an incident's signal is read no further than its window.
    @Test func recordingsAreReadWithinLimits() throws {
        let dir = TempDirectory("bomb")
        let bomb = dir.path + "/bomb.csv.gz"
        let made = try runCommand("/bin/sh", ["-c", "{ echo x_g,y_g,z_g; yes 0,0,1 | head -n 4100000; } | gzip -1 > \(bomb)"])
        #expect(made.status == 0)
        let size = (try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? Int) ?? 0
        #expect(size < 1 << 20, "\(size) bytes compressed")
        #expect(RecordingLimits.file.rows < 4_100_000)
        do {
            _ = try RecordingFile.read(path: bomb)
            Issue.record("a recording past the row limit was read")
        } catch {
            #expect(error.reason.contains("rows"), "\(error)")
        }
        do {
            _ = try RecordingFile.read(path: bomb, limits: RecordingLimits(textBytes: 1 << 20, rows: .max))
            Issue.record("a recording past the byte limit was read")
        } catch {
            #expect(error.reason.contains("MiB"), "\(error)")
        }

        let archive = IncidentArchive(folder: dir.path + "/incidents")
        let r = Self.record("FG-1", before: 5, after: 5)
        try archive.write(r)
        let rows = { (n: Int) in Recording.timedHeader + "\n" + (0..<n).map { Recording.row(AccelerationSample(time: Double($0) / 40, x: 0, y: 0, z: 1)) + "\n" }.joined() }
        try archive.writeSignal(rows(400), of: "FG-1")
        #expect(try archive.signal(of: r).samples.count == 400)
        try archive.writeSignal(rows(20_000), of: "FG-1")   // 500 s planted beside a 10 s incident
        #expect(throws: RecordingFileError.self) { try archive.signal(of: r) }
    }
}
