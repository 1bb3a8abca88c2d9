import ArgumentParser
import FallGuardDaemon
import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run a detector over a recording and print each detection with its time and reasons.",
        discussion: """
            FILE is a recording in the project's format: CSV with the header x_g,y_g,z_g (rows 40 Hz \
            apart) or t_s,x_g,y_g,z_g (times in seconds), values in g with gravity included. \
            Without FILE, replays the bundled demo: a real forward fall from the SisFall dataset \
            (Sucerquia et al., Sensors 17(1):198, 2017).
            """)

    @Argument(help: ArgumentHelp("Recording to replay (default: the bundled demo fall).", valueName: "file"))
    var file: String?

    @OptionGroup var detectorOptions: DetectorOptions

    @Flag(help: "Replay at the recording's own pace through the live sensor loop, printing detections as they happen (and going on 15 s after the end, in the last posture).")
    var realTime = false

    func run() throws {
        let configuration = try detectorOptions.configuration()
        let recording: Recording
        let name: String
        if let file {
            do {
                recording = try RecordingFile.read(path: file)
            } catch {
                printError(error.description)
                throw ExitStatus.dataError
            }
            name = file
        } else {
            recording = BundledRecordings.parse(BundledRecordings.demoFall)
            name = "bundled demo (\(BundledRecordings.demoFallName))"
        }
        print("Replaying \(name): \(recording.samples.count) samples, \(String(format1: recording.duration)) s, detector \(configuration.label)")
        var count = 0
        let report = { (d: FallSuspected) in
            count += 1
            print("\(String(format1: d.decisionTime)) s  FALL SUSPECTED  impact at \(String(format1: d.impactTime)) s, peak \(String(format1: d.peak)) g: \(d.reason)")
            if let up = d.recoveredAfter {
                print("            up again \(String(format1: up)) s after the impact, within the \(Int(RecoveryWatch.countdown)) s countdown: a recovered fall (no alarm)")
            }
            flushStandardOutput()
        }
        var detector = configuration.makeDetector()
        if realTime {
            // As a live sensor: the same source and loop as `run` and `alarm --recording`, the
            // wearer's last posture going on after the end for the decisions still due.
            let source = ReplaySource(name: name, recording: recording.samples)
            let loop = SensorLoop(source: source, detector: detector)
            let end = MonotonicClock.nanoseconds() + Int64((recording.duration + Self.longestDecision) * 1e9)
            source.start()
            loop.run(while: { MonotonicClock.nanoseconds() < end }) { if case let .detection(d) = $0 { report(d) } }
            source.stopAndWait()
        } else {
            // As fast as it goes, on the 40 Hz grid the bridge's pipeline gives the detector.
            DetectorRunner.detections(in: recording.samples, by: &detector).forEach(report)
        }
        print(count == 0 ? "No fall detected." : "\(count) detection\(count == 1 ? "" : "s").")
        if !realTime, let open = detector.openDecision {
            print("The recording ended while a decision was still due (\(open.rule) for the impact at "
                  + "\(String(format1: open.impactTime)) s, due at \(String(format1: open.dueTime)) s): too short to judge it.")
        }
    }

    /// Seconds after an impact by which every rule has decided (the long look: 15 s at most).
    static let longestDecision = 15.0
}

extension String {
    /// Two decimals.
    init(format1 v: Double) { self = String(format: "%.2f", v) }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
