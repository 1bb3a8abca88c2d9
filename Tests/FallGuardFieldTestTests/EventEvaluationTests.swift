import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// Continuous recordings scored by events, and the incident archive as a dataset.
@Suite struct EventEvaluationTests {
    static let detector = try! DetectorConfiguration()

    /// The fixture trials joined into one continuous recording (`gap` s without samples
    /// between them) with a label at each fall trial's largest acceleration; the trials' spans.
    static func joined(_ trials: [LabelledTrial], gap: Double = 5) throws -> (Recording, [EventLabel], [(LabelledTrial, ClosedRange<Double>)]) {
        var samples: [AccelerationSample] = [], labels: [EventLabel] = [], spans: [(LabelledTrial, ClosedRange<Double>)] = []
        var t0 = 100.0
        for trial in trials {
            let r = try RecordingFile.read(path: trial.path)
            let shifted = r.samples.map { AccelerationSample(time: t0 + $0.time, x: $0.x, y: $0.y, z: $0.z) }
            samples += shifted
            if trial.label.kind == .fall { labels.append(EventLabel(time: t0 + peakMagnitudeTime(r.samples)!, kind: .fall)) }
            spans.append((trial, shifted.first!.time...shifted.last!.time))
            t0 = shifted.last!.time + gap
        }
        return (Recording(samples: samples, hasTimes: true), labels, spans)
    }

    @Test func eventScoringFindsTheDetectionsTrialScoringFinds() throws {
        let dataset = try Dataset.scan(fixtures)
        let trialLevel = try Evaluator.evaluate(dataset, configuration: Self.detector)
        let (recording, labels, spans) = try Self.joined(dataset.trials)
        let events = EventEvaluator.outcome(path: "joined", recording: recording, labels: labels, configuration: Self.detector)
        for (trial, span) in spans {
            let want = try #require(trialLevel.outcomes.first { $0.trial == trial }).detections.map { span.lowerBound + $0.impactTime }
            let got = events.detections.map(\.impactTime).filter { span.contains($0) }
            #expect(got.count == want.count && zip(got, want).allSatisfy { abs($0 - $1) < 1e-6 }, "\(trial.path): \(got) vs \(want)")
        }
        let scores = EventScores([events])
        #expect(scores.fallTally.falls == 6 && scores.fallTally.detected == trialLevel.scores.fallTally.detected)
        #expect(scores.falseAlarms == trialLevel.scores.falseAlarms)
        #expect(abs(scores.wornHours * 3600 - recording.samples.count.asDouble / 40) < Double(spans.count) * 0.05,
                "worn time is the samples' time, without the gaps")
    }

    @Test func aNotWornSpanHidesItsDetectionsAndItsHoursAndAFarDetectionIsAFalseAlarm() throws {
        let dataset = try Dataset.scan(fixtures)
        let fall = try #require(dataset.trials.first { $0.label.kind == .fall })
        let (recording, labels, _) = try Self.joined([fall])
        let impact = labels[0].time
        let detected = EventEvaluator.outcome(path: "r", recording: recording, labels: labels, configuration: Self.detector)
        #expect(detected.falls.count == 1 && detected.falls[0].detection != nil && detected.falseAlarms.isEmpty)
        // The label 20 s away: the fall is missed and its detection is a false alarm.
        let moved = [EventLabel(time: impact + 20, kind: .fall)]
        let far = EventEvaluator.outcome(path: "r", recording: recording, labels: moved, configuration: Self.detector)
        #expect(far.falls[0].detection == nil && far.falseAlarms.count == 1)
        #expect(EventScores([far]).sensitivity == 0)
        // Off the body around the impact: no detection counts, and those seconds are not worn.
        let off = [EventLabel(time: impact - 2, kind: .notWornStart), EventLabel(time: impact + 2, kind: .notWornEnd)]
        let offBody = EventEvaluator.outcome(path: "r", recording: recording, labels: off, configuration: Self.detector)
        #expect(offBody.detections.isEmpty && offBody.falseAlarms.isEmpty)
        #expect(abs((detected.wornSeconds - offBody.wornSeconds) - 4) < 0.1, "\(detected.wornSeconds) vs \(offBody.wornSeconds)")
    }

    @Test func labelSidecarsAreReadAndTheirErrorsNamed() throws {
        let dir = TempDirectory("labels")
        #expect(LabelsFile.sidecar(of: dir.path + "/2026-11-24T02.csv.gz") == dir.path + "/2026-11-24T02.labels.csv")
        #expect(LabelsFile.sidecar(of: "a/b.csv") == "a/b.labels.csv")
        let good = dir.write("a.labels.csv", "t_s,label,note\n10.5,fall,slid off the bed\n# a comment\n20,not-worn-start\n30,not-worn-end,\n")
        #expect(try LabelsFile.read(path: good) == [EventLabel(time: 10.5, kind: .fall, note: "slid off the bed"),
                                                     EventLabel(time: 20, kind: .notWornStart), EventLabel(time: 30, kind: .notWornEnd)])
        for (text, line, reason) in [("t,label\n", 1, "header is 't,label'"), ("t_s,label\n1,fell\n", 2, "label 'fell' is not one of"),
                                     ("t_s,label\nnan,fall\n", 2, "expected t_s,label"), ("t_s,label\n5,fall\n4,fall\n", 3, "comes before")] {
            let path = dir.write("bad.labels.csv", text)
            let error = #expect(throws: RecordingFileError.self) { try LabelsFile.read(path: path) }
            #expect(error?.line == line && error?.reason.contains(reason) == true, "\(String(describing: error))")
        }
    }

    @Test func aFolderMayMixTrialsAndLabelledRecordings() throws {
        let dir = TempDirectory("mixed")
        let trial = try #require(try Dataset.scan(fixtures).trials.first { $0.label.kind == .fall })
        try FileManager.default.copyItem(atPath: trial.path, toPath: dir.path + "/" + (trial.path as NSString).lastPathComponent)
        let text = try String(contentsOfFile: trial.path, encoding: .utf8)
        let gz = Array(text.utf8).withUnsafeBytes { Gzip.member($0) }
        try Data(gz).write(to: URL(fileURLWithPath: dir.path + "/night.csv.gz"))
        dir.write("night.labels.csv", "t_s,label\n")
        dir.write("notes.csv", "x_g,y_g,z_g\n0,0,1\n")
        let d = try Dataset.scan(dir.path)
        #expect(d.trials.count == 1 && d.recordings == [dir.path + "/night.csv.gz"] && d.unlabelled == [dir.path + "/notes.csv"])
        let (outcomes, skipped) = try EventEvaluator.evaluate(d, configuration: Self.detector)
        #expect(skipped.isEmpty && outcomes.count == 1 && outcomes[0].falseAlarms.count == 1, "no label: its fall is a false alarm")
    }

    @Test func theArchiveSaysWhichLabelledIncidentsNewSettingsWouldMissOrStillRaise() throws {
        let dir = TempDirectory("archive")
        let archive = IncidentArchive(folder: dir.path + "/incidents")
        let trials = try Dataset.scan(fixtures).trials
        let fall = try #require(trials.first { $0.label.kind == .fall })
        let adl = try #require(trials.first { $0.label.kind == .adl })
        let info = IncidentRecord.DetectorInfo(name: "multiphase", settings: [:], software: "test")
        for (id, trial, label) in [("FG-1", fall, IncidentLabel.fall), ("FG-2", adl, .noFall), ("FG-3", adl, .unsure)] {
            let r = try RecordingFile.read(path: trial.path)
            var record = IncidentRecord(id: id, kind: "fall-suspected", eventTime: peakMagnitudeTime(r.samples)!, eventWallTime: "2026-11-24T0\(id.last!):00:00Z",
                                        before: 60, after: 60, detector: info, detection: nil)
            record.labels = [IncidentLabelEntry(label: label, by: "tester", at: "2026-11-25T00:00:00Z")]
            try archive.write(record)
            let text = Recording.timedHeader + "\n" + r.samples.map { Recording.row($0) + "\n" }.joined()
            try IncidentArchive.writeAtomically(Data(text.utf8), to: archive.signalPath(of: id))
        }
        let now = ArchiveEvaluation.evaluate(archive, configuration: Self.detector)
        #expect(now.detectedFalls.map(\.id) == ["FG-1"] && now.missedFalls.isEmpty)
        #expect(now.noLongerRaised.map(\.id) == ["FG-2"] && now.stillRaised.isEmpty && now.notScored.map(\.id) == ["FG-3"])
        let deaf = ArchiveEvaluation.evaluate(archive, configuration: try DetectorConfiguration(assignments: ["impact=8", "soft-impact=8"]))
        #expect(deaf.missedFalls.map(\.id) == ["FG-1"], "\(deaf.text(detector: Self.detector))")
        #expect(deaf.text(detector: Self.detector).contains("MISSED 1 (FG-1)"))
        // From the command line.
        let cli = try fallguard("evaluate", archive.folder)
        #expect(cli.status == 0 && cli.stdout.contains("detected 1, MISSED 0") && cli.stdout.contains("no longer 1 (FG-2)"), "\(cli.stdout)\(cli.stderr)")
    }
}

private extension Int {
    var asDouble: Double { Double(self) }
}
