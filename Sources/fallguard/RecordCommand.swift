import ArgumentParser
import FallGuardDaemon
import Atomics
import FallGuardCore
import FallGuardHardware
import Foundation

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record the live accelerometer stream at 40 Hz for field tests.",
        discussion: """
            Writes the project's recording format with times: t_s,x_g,y_g,z_g (seconds on the \
            monotonic clock from the start, acceleration in g). Ctrl-C or --duration ends it with \
            the file complete; `fallguard replay` and `evaluate` read it as it is. Gaps (a device \
            that stalls or is unplugged) are reported on standard error, not bridged.
            """)

    @Option(name: .long, help: ArgumentHelp("File to write.", valueName: "file"))
    var out: String

    @Option(help: "Seconds to record (default: until Ctrl-C).")
    var duration: Seconds?

    @Option(help: "IIO device name (default: adxl345, then mpu6050, then the first accelerometer).")
    var device: String?

    @Option(help: "libiio context URI.")
    var uri = "local:"

    func run() throws {
        guard let file = fopen(out, "w") else {
            printError("\(out): \(String(cString: strerror(errno)))")
            throw ExitStatus.noInput
        }
        let source = AccelerometerSource(configuration: AccelerometerConfiguration(uri: uri, device: device))
        let (stop, signals) = stopOnSignals()
        defer { signals.forEach { $0.cancel() } }
        fputs(Recording.timedHeader + "\n", file)
        source.start()
        var resampler: Resampler?
        var origin: Double?
        var written = 0
        let started = MonotonicClock.nanoseconds()
        while !stop.load(ordering: .acquiring) {
            if let duration, Double(MonotonicClock.nanoseconds() - started) * 1e-9 >= duration.value { break }
            source.events.drain { event in
                switch event {
                case .opened(let info):
                    printError("recording \(info.name) (\(info.id)) at \(info.uri): \(info.mode.rawValue), \(info.samplingFrequency ?? 0) Hz -> 40 Hz")
                    resampler = try? Resampler(inputRate: info.samplingFrequency ?? detectorRate)
                    if resampler == nil { printError("\(info.name): sampling_frequency \(info.samplingFrequency ?? 0) Hz is not a sensor's rate; nothing is recorded") }
                case .failed(let error, let retry):
                    printError("\(error); retrying in \(retry) s")
                }
            }
            source.samples.drain { s in
                if origin == nil { origin = s.time }
                resampler?.process(s) { r in
                    let shifted = AccelerationSample(time: r.time - origin!, x: r.x, y: r.y, z: r.z)
                    fputs(Recording.row(shifted) + "\n", file)
                    written += 1
                }
            }
            source.waitForData(timeout: 0.1)
        }
        source.stopAndWait()
        fflush(file)
        fsync(fileno(file))
        fclose(file)
        let gaps = resampler?.gaps ?? 0
        printError("wrote \(written) samples (\(String(format: "%.1f", Double(written) / detectorRate)) s) to \(out)"
                   + (gaps > 0 ? "; \(gaps) gaps, \(resampler!.missingOutputs) samples missing" : "")
                   + (source.samples.overruns > 0 ? "; \(source.samples.overruns) overruns" : ""))
    }
}
