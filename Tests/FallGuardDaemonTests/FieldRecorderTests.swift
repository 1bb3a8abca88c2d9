import FallGuardConfig
import FallGuardCore
import FallGuardDaemon
import FallGuardFieldTest
import FallGuardTestSupport
import Foundation
import Testing

/// The daemon records while it protects: the stream the detector saw in hourly compressed
/// files, and each incident's signal and record in the archive, labelled by the wearer's abort
/// and by `fallguard label`.
@Suite(.serialized) struct FieldRecorderTests {
    static let settings = """
        recording: {enabled: true, flush-interval: 1, incident-before: 5, incident-after: 5}
        """

    @Test func anAbortedFallIsArchivedWithItsSignalAndTheRecordingIsWhatTheDetectorSaw() async throws {
        try await InProcessDaemonTests.withDaemonInCountdown(extra: Self.settings) { daemon, gpio, dir in
            gpio.set(input: "GPIO17", active: true)
            try await Task.sleep(for: .milliseconds(200))
            gpio.set(input: "GPIO17", active: false)
            #expect(await until(5) { daemon.alarm.snapshot.status == .monitoring }, "a short press aborts the countdown")
            let state = dir.path + "/state"
            let archive = IncidentArchive(folder: state + "/incidents")
            // The after-window (5 s of samples) completes, then the signal is written whole.
            #expect(await until(10) { (try? RecordingFile.read(path: archive.signalPath(of: "FG-1")))?.samples.count == 401 },
                    "5 s before the impact, its sample, 5 s after, at 40 Hz")
            let record = try archive.record("FG-1")
            #expect(record.kind == "fall-suspected" && record.outcome == "false-alarm")
            #expect(record.label?.label == .noFall && record.label?.by == "wearer")
            #expect(record.timeline.map(\.event) == ["fall-suspected", "false-alarm"])
            #expect(record.detector.name == "multiphase" && record.detector.settings["impact"] == 2)
            #expect(record.detector.software.hasPrefix("fallguard "))
            let detection = try #require(record.detection)
            #expect(detection.impactTime == record.eventTime)
            let signal = try RecordingFile.read(path: archive.signalPath(of: "FG-1"))
            // Times are written to 0.1 ms.
            #expect(signal.samples[200].time > record.eventTime - 1e-4 && signal.samples[199].time < record.eventTime - 1e-4,
                    "the signal is centred on the impact")

            // The recording: what the detector saw, which for this 40 Hz replay is the fixture itself.
            #expect(await until(3) { ((try? DaemonStatus.read(from: state))?.recording?.bytes ?? 0) > 0 })
            let status = try DaemonStatus.read(from: state)
            #expect(status.recording?.dropped == 0 && status.recording?.incidents == 1, "\(String(describing: status.recording))")
            let files = RecordingWriter.files(in: state + "/recordings")
            #expect(files.count == 1)
            let recorded = try RecordingFile.read(path: files[0].path).samples
            let fixture = try RecordingFile.read(path: DaemonCrashDuringCountdownTests.fixture).samples
            let n = min(recorded.count, fixture.count)
            #expect(n > 400, "\(recorded.count) samples recorded")
            let differing = (0..<n).filter { i in
                abs(recorded[i].x - fixture[i].x) > 1e-4 || abs(recorded[i].y - fixture[i].y) > 1e-4 || abs(recorded[i].z - fixture[i].z) > 1e-4
            }
            #expect(differing.isEmpty, "rows \(differing.prefix(5)) differ from the fixture")
            InProcessDaemonTests.expectHealthDataModes(state)

            // The archive from the command line: listed, then labelled over the wearer's word.
            let listed = try fallguard("incidents", "--state", state)
            #expect(listed.status == 0)
            #expect(listed.stdout.contains("FG-1") && listed.stdout.contains("false-alarm") && listed.stdout.contains("no-fall"), "\(listed.stdout)")
            let labelled = try fallguard("label", "FG-1", "fall", "--note", "seen on the video", "--by", "tester", "--state", state)
            #expect(labelled.status == 0, "\(labelled.stderr)")
            let relabelled = try archive.record("FG-1")
            #expect(relabelled.labels.map(\.label) == [.noFall, .fall])
            #expect(relabelled.label?.by == "tester" && relabelled.label?.note == "seen on the video")
            // --json: the records as one array, the same as the archive holds them
            let asJSON = try fallguard("incidents", "--json", "--state", state)
            #expect(asJSON.status == 0, "\(asJSON.stderr)")
            let listedRecords = try JSONDecoder().decode([IncidentRecord].self, from: Data(asJSON.stdout.utf8))
            #expect(listedRecords.map(\.id) == ["FG-1"])
            #expect(listedRecords.first?.labels.map(\.label) == [.noFall, .fall] && listedRecords.first?.outcome == "false-alarm")
            #expect(listedRecords.first?.detection?.impactTime == record.eventTime)
            let unknown = try fallguard("label", "FG-9", "fall", "--state", state)
            #expect(unknown.status == 66 && unknown.stderr.contains("FG-9"), "\(unknown.stderr)")
            let bad = try fallguard("label", "FG-1", "maybe", "--state", state)
            #expect(bad.status == 64, "\(bad.stderr)")
        }
    }
}
