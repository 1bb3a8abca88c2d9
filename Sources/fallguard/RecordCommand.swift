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
            monotonic clock from the start, acceleration in g), and gx_dps,gy_dps,gz_dps (angular \
            velocity in °/s about the same axes) when the sensor has a gyroscope (the MPU6050; \
            the ADXL345 has none). Ctrl-C or --duration ends it with \
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
        // The header waits for the device: whether it has a gyroscope decides the columns.
        var header: String?
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
                    printError("recording \(info.name) (\(info.id)) at \(info.uri): \(info.mode.rawValue), \(info.samplingFrequency ?? 0) Hz -> 40 Hz, \(info.axes)")
                    let columns = info.gyroscope == nil ? Recording.timedHeader : Recording.sixAxisHeader
                    if header == nil {
                        header = columns
                        fputs(columns + "\n", file)
                    } else if header != columns {
                        // One file, one format: a device reopened with other axes keeps the file's.
                        printError("\(info.name): reopened with \(info.axes); the file keeps its columns (\(header!))")
                    }
                    resampler = try? Resampler(inputRate: info.samplingFrequency ?? detectorRate)
                    if resampler == nil { printError("\(info.name): sampling_frequency \(info.samplingFrequency ?? 0) Hz is not a sensor's rate; nothing is recorded") }
                case .failed(let error, let retry):
                    printError("\(error); retrying in \(retry) s")
                }
            }
            source.samples.drain { s in
                if origin == nil { origin = s.time }
                resampler?.process(s) { r in
                    var shifted = AccelerationSample(time: r.time - origin!, x: r.x, y: r.y, z: r.z)
                    if header == Recording.sixAxisHeader {
                        // A six-axis file's rows all carry the gyroscope's columns (zero-filled
                        // never: a sample without them has none to give, and is left out).
                        guard let g = r.gyro else { return }
                        shifted.gyro = g
                    }
                    fputs(Recording.row(shifted) + "\n", file)
                    written += 1
                }
            }
            source.waitForData(timeout: 0.1)
        }
        source.stopAndWait()
        if header == nil { fputs(Recording.timedHeader + "\n", file) }   // no device: an empty recording
        fflush(file)
        fsync(fileno(file))
        fclose(file)
        let gaps = resampler?.gaps ?? 0
        printError("wrote \(written) samples (\(String(format: "%.1f", Double(written) / detectorRate)) s) to \(out)"
                   + (gaps > 0 ? "; \(gaps) gaps, \(resampler!.missingOutputs) samples missing" : "")
                   + (source.samples.overruns > 0 ? "; \(source.samples.overruns) overruns" : ""))
    }
}
