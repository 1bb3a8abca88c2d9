import FallGuardCore
import Foundation

/// The incident archive as a dataset: what other detector settings would have done with each
/// labelled incident's signal (`fallguard evaluate <state>/incidents`).
public struct ArchiveVerdict: Sendable {
    public var id: String
    public var kind: String
    public var label: IncidentLabelEntry?
    /// What the bridge's detector did then (nil for a help request or a sensor fault).
    public var detectedThen: Bool
    /// The detection the settings under test make for the incident's event, if any: for a
    /// suspected fall, an impact within the tolerance of its impact; for a help request or a
    /// sensor fault, any detection in the signal.
    public var detectionNow: FallSuspected?
}

public struct ArchiveEvaluation: Sendable {
    public var verdicts: [ArchiveVerdict]
    /// Incidents whose record or signal could not be read (`path: reason`).
    public var unreadable: [String]
    public var tolerance: Double

    public static func evaluate(_ archive: IncidentArchive, configuration: DetectorConfiguration,
                                tolerance: Double = EventEvaluator.defaultTolerance) -> ArchiveEvaluation {
        let (records, unreadable) = archive.records()
        var verdicts: [ArchiveVerdict] = [], failed = unreadable
        for r in records {
            let recording: Recording
            do { recording = try archive.signal(of: r) } catch {
                failed.append(error.description)
                continue
            }
            let found = DetectorRunner.detections(in: recording.samples, configuration: configuration)
            let now = r.kind == "fall-suspected"
                ? found.filter { abs($0.impactTime - r.eventTime) <= tolerance }.min { abs($0.impactTime - r.eventTime) < abs($1.impactTime - r.eventTime) }
                : found.first
            verdicts.append(ArchiveVerdict(id: r.id, kind: r.kind, label: r.label, detectedThen: r.kind == "fall-suspected",
                                           detectionNow: now))
        }
        return ArchiveEvaluation(verdicts: verdicts, unreadable: failed, tolerance: tolerance)
    }

    /// Labelled falls the settings miss, labelled false alarms they still raise, and the rest.
    public var missedFalls: [ArchiveVerdict] { verdicts.filter { $0.label?.label == .fall && $0.detectionNow == nil } }
    public var detectedFalls: [ArchiveVerdict] { verdicts.filter { $0.label?.label == .fall && $0.detectionNow != nil } }
    public var stillRaised: [ArchiveVerdict] { verdicts.filter { $0.label?.label == .noFall && $0.detectionNow != nil } }
    public var noLongerRaised: [ArchiveVerdict] { verdicts.filter { $0.label?.label == .noFall && $0.detectionNow == nil } }
    public var notScored: [ArchiveVerdict] { verdicts.filter { $0.label == nil || $0.label?.label == .unsure } }

    /// `fallguard evaluate --json` on an archive.
    public func json(detector: DetectorConfiguration) -> String {
        struct Row: Encodable { var id, kind: String; var label: String?; var by: String?; var raised_now: Bool; var impact_s: Double?; var reason: String? }
        struct Out: Encodable {
            var detector: String; var settings: [String: Double]; var tolerance_s: Double
            var labelled_falls: Int; var detected_falls: [String]; var missed_falls: [String]
            var labelled_false_alarms: Int; var still_raised: [String]; var no_longer_raised: [String]
            var not_scored: [String]; var unreadable: [String]; var incidents: [Row]
        }
        let out = Out(detector: detector.name, settings: detector.settings.values, tolerance_s: tolerance,
                      labelled_falls: missedFalls.count + detectedFalls.count, detected_falls: detectedFalls.map(\.id),
                      missed_falls: missedFalls.map(\.id), labelled_false_alarms: stillRaised.count + noLongerRaised.count,
                      still_raised: stillRaised.map(\.id), no_longer_raised: noLongerRaised.map(\.id),
                      not_scored: notScored.map(\.id), unreadable: unreadable,
                      incidents: verdicts.map { Row(id: $0.id, kind: $0.kind, label: $0.label?.label.rawValue, by: $0.label?.by,
                                                    raised_now: $0.detectionNow != nil, impact_s: $0.detectionNow?.impactTime,
                                                    reason: $0.detectionNow?.reason) })
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try! enc.encode(out), as: UTF8.self)
    }

    /// The report a person reads.
    public func text(detector: DetectorConfiguration) -> String {
        func ids(_ v: [ArchiveVerdict]) -> String { v.isEmpty ? "none" : v.map(\.id).joined(separator: ", ") }
        var out = "Detector      \(detector.label)\n"
        out += "Archive       \(verdicts.count) incidents with their signal\n"
        out += "Falls         \(detectedFalls.count + missedFalls.count) labelled fall: detected \(detectedFalls.count), MISSED \(missedFalls.count) (\(ids(missedFalls)))\n"
        out += "False alarms  \(stillRaised.count + noLongerRaised.count) labelled no-fall: still raised \(stillRaised.count) (\(ids(stillRaised))), no longer \(noLongerRaised.count) (\(ids(noLongerRaised)))\n"
        out += "Not scored    \(notScored.count) unlabelled or unsure (\(ids(notScored)))\n"
        for u in unreadable { out += "Unreadable    \(u)\n" }
        return out
    }
}
