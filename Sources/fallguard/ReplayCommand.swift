import ArgumentParser
import FallGuardDaemon
import FallGuardCore
import FallGuardFieldTest

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

    @Flag(help: "Replay at the recording's own pace, printing detections as they happen.")
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
        var detector = configuration.makeDetector()
        var count = 0
        let clock = ContinuousClock()
        let start = clock.now
        let t0 = recording.samples.first?.time ?? 0
        for s in recording.samples {
            if realTime {
                let due = start + .milliseconds(Int64(saturating: (s.time - t0) * 1000))
                if due > clock.now { Thread_sleep(until: due, clock: clock) }
            }
            if let d = detector.process(s) {
                count += 1
                print("\(String(format1: d.decisionTime)) s  FALL SUSPECTED  impact at \(String(format1: d.impactTime)) s, peak \(String(format1: d.peak)) g: \(d.reason)")
                flushStandardOutput()
            }
        }
        print(count == 0 ? "No fall detected." : "\(count) detection\(count == 1 ? "" : "s").")
        if let open = detector.openDecision {
            print("The recording ended while a decision was still due (\(open.rule) for the impact at "
                  + "\(String(format1: open.impactTime)) s, due at \(String(format1: open.dueTime)) s): too short to judge it.")
        }
    }
}

func Thread_sleep(until due: ContinuousClock.Instant, clock: ContinuousClock) {
    let d = due - clock.now
    let (s, a) = d.components
    guard s > 0 || a > 0 else { return }
    var ts = timespec(tv_sec: Int(s), tv_nsec: Int(a / 1_000_000_000))
    var rest = timespec()
    while nanosleep(&ts, &rest) != 0 { ts = rest }
}

extension String {
    /// Two decimals.
    init(format1 v: Double) { self = String(format: "%.2f", v) }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
