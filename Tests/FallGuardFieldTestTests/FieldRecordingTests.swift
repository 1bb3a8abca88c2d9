import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// The parts of field-test keeping that need no daemon: the incident signal window, the hourly
/// recording files, the incident record and archive.
@Suite struct FieldRecordingTests {
    static func sample(_ i: Int, origin: Double = 100) -> AccelerationSample {
        AccelerationSample(time: origin + Double(i) / 40, x: Double(i % 7) / 100, y: -1, z: Double(i % 5) / 100)
    }

    @Test func anIncidentKeepsItsLeadUpAndItsAfterWindowCountedInSamples() {
        var buffer = IncidentSignalBuffer(before: 1, after: 1)
        for i in 0..<130 { #expect(buffer.append(Self.sample(i)).isEmpty) }
        // The detection arrives 10 samples after the event (sample 120, t = 103 s).
        buffer.begin("FG-1", eventTime: 103)
        #expect(buffer.pending.map(\.samples.count) == [40 + 10], "40 before, the event's sample and the 9 after it")
        var done: [IncidentSignalBuffer.Window] = []
        for i in 130..<200 { done += buffer.append(Self.sample(i)) }
        #expect(done.count == 1)
        let w = done[0]
        #expect(w.id == "FG-1" && w.event == 103)
        #expect(w.samples.count == 81, "40 before, the event's sample, 40 after")
        #expect(w.samples.first == Self.sample(80) && w.samples.last == Self.sample(160))
        #expect(buffer.pending.isEmpty)
    }

    @Test func aLateDetectionIsTrimmedToItsWindowAndAStopKeepsWhatThereIs() {
        var buffer = IncidentSignalBuffer(before: 1, after: 0.5)
        for i in 0..<200 { _ = buffer.append(Self.sample(i)) }
        buffer.begin("FG-2", eventTime: 102)   // sample 80; history already holds 119 samples after it
        let done = buffer.append(Self.sample(200))
        #expect(done.count == 1 && done[0].samples.count == 40 + 1 + 20)
        #expect(done[0].samples.last == Self.sample(100))
        buffer.begin("FG-3", eventTime: 104.5)
        #expect(buffer.finishAll().map { $0.samples.count } == [40 + 21], "the stop keeps the window as far as it went")
        #expect(buffer.pending.isEmpty)
    }

    @Test func recordingsAreHourlyFilesThatReadAsTheyAre() throws {
        let dir = TempDirectory("recordings")
        let folder = dir.path + "/rec"
        let writer = RecordingWriter(directory: folder, keepBytes: 1 << 30)
        let hour = 1_795_478_400.0   // 2026-11-24T00:00:00Z
        // 20 s before the hour turns and 20 s after it, flushed every 4 s.
        for i in 0..<1600 {
            try writer.append(Self.sample(i), wallTime: hour - 20 + Double(i) / 40)
            if i % 160 == 159 { try writer.flush() }
        }
        try writer.close()
        let files = RecordingWriter.files(in: folder).map { ($0.path as NSString).lastPathComponent }
        #expect(files == ["2026-11-23T23.csv.gz", "2026-11-24T00.csv.gz"])
        let first = try RecordingFile.read(path: folder + "/" + files[0])
        let second = try RecordingFile.read(path: folder + "/" + files[1])
        #expect(first.samples.count == 800 && second.samples.count == 800)
        #expect(first.hasTimes && first.samples.first?.time == 100 && second.samples.first?.time == 120)
        for (i, s) in (first.samples + second.samples).enumerated() {
            let want = Self.sample(i)
            #expect(abs(s.time - want.time) < 1e-4 && abs(s.x - want.x) < 1e-4 && abs(s.z - want.z) < 1e-4)
        }
        let text = try runCommand("/bin/gzip", ["-dc", folder + "/" + files[1]]).stdout
        #expect(text.hasPrefix("t_s,x_g,y_g,z_g\n# wall-clock 2026-11-24T00:00:00Z at t_s 120.0000\n"), "\(text.prefix(80))")
        // Files and folder are health data: 0600 / 0700.
        let mode = { (p: String) in ((try? FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? Int) ?? -1) & 0o777 }
        #expect(mode(folder) == 0o700 && mode(folder + "/" + files[0]) == 0o600)

        // A restart within the hour starts a file of its own: times never go back in one file.
        let again = RecordingWriter(directory: folder, keepBytes: 1 << 30)
        try again.append(Self.sample(0, origin: 5), wallTime: hour + 30)
        try again.close()
        #expect(RecordingWriter.files(in: folder).map { ($0.path as NSString).lastPathComponent }.last == "2026-11-24T00-2.csv.gz")
    }

    @Test func aWriterStoppedWithoutClosingLosesOnlyWhatCameAfterItsLastFlush() throws {
        let dir = TempDirectory("recordings")
        let folder = dir.path + "/rec"
        do {   // a kill -9: flushed 10 s, then 2.5 s more that never reach the disk
            let writer = RecordingWriter(directory: folder, keepBytes: 1 << 30)
            for i in 0..<400 { try writer.append(Self.sample(i), wallTime: 1_795_478_400 + Double(i) / 40) }
            try writer.flush()
            for i in 400..<500 { try writer.append(Self.sample(i), wallTime: 1_795_478_400 + Double(i) / 40) }
        }
        let path = try #require(RecordingWriter.files(in: folder).first?.path)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let inflated = try bytes.withUnsafeBytes { try Gzip.inflate($0) }
        #expect(inflated.truncated, "no gzip trailer: the stream was never finished")
        let recording = try RecordingFile.read(path: path)
        #expect(recording.samples.count == 400)
        #expect(recording.samples.last.map { abs($0.time - Self.sample(399).time) < 1e-9 } == true)
    }

    @Test func theDiskBudgetDeletesTheOldestFilesButNeverTheOneBeingWritten() throws {
        let dir = TempDirectory("recordings")
        let folder = dir.path + "/rec"
        let hour = 1_795_478_400.0
        var sizes: [Int64] = []
        for h in 0..<4 {   // four hours of 2 minutes each, written one after another
            let w = RecordingWriter(directory: folder, keepBytes: 1 << 30)
            for i in 0..<4800 { try w.append(Self.sample(i, origin: Double(h) * 3600), wallTime: hour + Double(h) * 3600 + Double(i) / 40) }
            try w.close()
            sizes.append(w.bytesWritten)
        }
        #expect(RecordingWriter.files(in: folder).count == 4)
        // A budget that holds two files: the next hour's file deletes the two oldest.
        let budget = sizes[2] + sizes[3] + sizes[0] / 2
        let w = RecordingWriter(directory: folder, keepBytes: budget)
        try w.append(Self.sample(0, origin: 5 * 3600), wallTime: hour + 5 * 3600)
        try w.flush()
        let names = RecordingWriter.files(in: folder).map { ($0.path as NSString).lastPathComponent }
        #expect(names == ["2026-11-24T02.csv.gz", "2026-11-24T03.csv.gz", "2026-11-24T05.csv.gz"], "\(names)")
        // A budget smaller than the current file alone never deletes it.
        let tiny = RecordingWriter(directory: folder, keepBytes: 1)
        try tiny.append(Self.sample(0, origin: 6 * 3600), wallTime: hour + 6 * 3600)
        try tiny.flush()
        tiny.pruneToBudget()
        #expect(RecordingWriter.files(in: folder).map { ($0.path as NSString).lastPathComponent } == ["2026-11-24T06.csv.gz"])
    }

    /// Issue 40 item 15: a state directory that is a symbolic link was refused everywhere but
    /// by the recorder, which wrote `<state>/recordings/<hour>.csv.gz` through the link.
    @Test func aStateDirectoryThatIsALinkIsNotRecordedThrough() throws {
        let dir = TempDirectory("recording-link")
        let real = dir.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        let state = dir.path + "/state"
        try FileManager.default.createSymbolicLink(atPath: state, withDestinationPath: real)
        let w = RecordingWriter(directory: state + "/recordings", keepBytes: 1 << 30, within: state)
        #expect(throws: RecordingWriteError.self) {
            try w.append(Self.sample(0, origin: 0), wallTime: 1_795_478_400)
            try w.flush()
        }
        #expect(!FileManager.default.fileExists(atPath: real + "/recordings"), "nothing made through the link")
        // The same writer over a real state directory records.
        let ok = RecordingWriter(directory: real + "/recordings", keepBytes: 1 << 30, within: real)
        try ok.append(Self.sample(0, origin: 0), wallTime: 1_795_478_400)
        try ok.flush()
        #expect(RecordingWriter.files(in: real + "/recordings").count == 1)
    }

    static let detector = IncidentRecord.DetectorInfo(name: "multiphase", settings: ["impact": 2], software: "fallguard test")

    static func fall(_ id: String, at t: Double) -> IncidentEvent {
        let fall = FallSuspected(detector: "multiphase", impactTime: t - 2.5, decisionTime: t, peak: 3.1,
                                 phases: ["strong-impact", "posture-change"], features: [DetectionFeature("peak", 3.1, "g")])
        return IncidentEvent(time: t, incident: id, event: .fallSuspected, detail: "countdown started", fall: fall)
    }

    @Test func anAbortIsTheWearersNoFallAndLaterLabelsKeepTheHistory() throws {
        var r = try #require(IncidentRecord.begun(by: Self.fall("FG-4", at: 50), wallTime: "2026-11-24T01:00:00Z",
                                                  before: 60, after: 60, detector: Self.detector))
        #expect(r.kind == "fall-suspected" && r.eventTime == 47.5 && r.outcome == "open" && r.label == nil)
        r.apply(IncidentEvent(time: 53, incident: "FG-4", event: .falseAlarm, detail: "aborted"), wallTime: "2026-11-24T01:00:03Z")
        #expect(r.outcome == "false-alarm")
        #expect(r.label == IncidentLabelEntry(label: .noFall, by: "wearer", at: "2026-11-24T01:00:03Z", note: "the wearer aborted the countdown"))
        #expect(r.timeline.map(\.event) == ["fall-suspected", "false-alarm"])
        let tester = IncidentLabelEntry(label: .fall, by: "tester", at: "2026-11-24T01:00:02Z")
        #expect(IncidentLabelEntry.merged(r.labels, [tester] + r.labels) == [tester] + r.labels, "each once, in the order set")
        #expect(IncidentRecord.begun(by: IncidentEvent(time: 1, incident: "FG-4", event: .acknowledged, detail: ""),
                                     wallTime: "", before: 1, after: 1, detector: Self.detector) == nil)

        let dir = TempDirectory("archive")
        let archive = IncidentArchive(folder: dir.path + "/incidents")
        try archive.write(r)
        let labelled = try archive.label("FG-4", IncidentLabelEntry(label: .fall, by: "tester", at: "2026-11-25T09:00:00Z", note: "on the video"))
        #expect(labelled.labels.map(\.label) == [.noFall, .fall] && labelled.label?.by == "tester")
        #expect(try archive.record("FG-4") == labelled)
        #expect(IncidentArchive.isArchive(archive.folder))
        // A damaged record is named, not skipped in silence.
        try FileManager.default.createDirectory(atPath: archive.path(of: "FG-5"), withIntermediateDirectories: true)
        try "{".write(toFile: archive.recordPath(of: "FG-5"), atomically: true, encoding: .utf8)
        let listed = archive.records()
        #expect(listed.records.map(\.id) == ["FG-4"])
        #expect(listed.unreadable.count == 1 && listed.unreadable[0].hasPrefix(archive.recordPath(of: "FG-5") + ": "))
    }
}
