import ArgumentParser
import Atomics
import FallGuardCore
import FallGuardDaemon
import FallGuardHardware
import Foundation

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Run the detector on the live accelerometer and print detections and sensor health.",
        discussion: """
            For field tests and bring-up: no buzzer, no alerts. Each line is a detection, a \
            sensor problem starting or ending (stalled, stuck, saturated, implausible, io-error, \
            disappeared) or the device (re)opening. With --json, one JSON object per line.
            """)

    @Option(help: "IIO device name (default: adxl345, then mpu6050, then the first accelerometer).")
    var device: String?

    @Option(help: "libiio context URI.")
    var uri = "local:"

    @Option(help: "Seconds to run (default: until Ctrl-C).")
    var duration: Seconds?

    @Option(help: ArgumentHelp("Lowest device sampling rate to ask for; the nearest supported rate at or above it is used.", valueName: "Hz"))
    var rate: Double = 40

    @Flag(help: "Read the _raw attributes on a schedule even when the device has a buffer.")
    var polled = false

    @Option(help: ArgumentHelp("CPU for the sensor thread (capture and detection): a number (0: where a Raspberry Pi takes the sensor's interrupt), last or any (no pinning).", valueName: "cpu"))
    var cpu: String = SensorCPU.default.description

    @OptionGroup var detectorOptions: DetectorOptions

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: ArgumentHelp("Write each raw sample as it reaches the pipeline: CLOCK_MONOTONIC ns,x,y,z (g), one per line.", valueName: "file"))
    var arrivalLog: String?

    func validate() throws { try requireOption("rate", rate, in: Resampler.rates) }

    func run() throws {
        let detector = try detectorOptions.configuration().makeDetector()
        let (stop, signals) = stopOnSignals()
        defer { signals.forEach { $0.cancel() } }
        guard let sensorCPU = SensorCPU(cpu) else {
            printError("--cpu: '\(cpu)' is not a CPU: use last, any or a CPU number")
            throw ExitCode.validationFailure
        }
        let source = AccelerometerSource(configuration: AccelerometerConfiguration(uri: uri, device: device, minimumRate: rate,
                                                                                   preferBuffered: !polled, cpu: sensorCPU))
        if let why = sensorCPU.pinCurrentThread() { printError("--cpu: not pinned: \(why)") }
        let loop = SensorLoop(source: source, detector: detector)
        var arrivals: UnsafeMutablePointer<FILE>?
        if let arrivalLog {
            arrivals = fopen(arrivalLog, "w")
            guard arrivals != nil else {
                printError("\(arrivalLog): \(String(cString: strerror(errno)))")
                throw ExitStatus.noInput
            }
        }
        nonisolated(unsafe) let file = arrivals
        source.start()
        let started = MonotonicClock.nanoseconds()
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let endNs = duration.map { started + $0.nanoseconds } ?? .max
        let json = json   // read once: property wrappers are not free in a loop that runs 40 times a second
        // Start-up (libiio context, device set-up) is measured apart from the steady capture.
        var atOpen: (usage: ProcessUsage, t: Int64)?
        let pipeline = loop.run(while: { !stop.load(ordering: .acquiring) && MonotonicClock.nanoseconds() < endNs },
                                prepare: { p in
                                    if let file { p.onRawSample = { s in fputs("\(MonotonicClock.nanoseconds()),\(s.x),\(s.y),\(s.z)\n", file) } }
                                }) { output in
            if case .opened = output, atOpen == nil { atOpen = (ProcessUsage.current(), MonotonicClock.nanoseconds()) }
            print(line(output, enc))
            flushStandardOutput()
        }
        source.stopAndWait()
        if let arrivals { fclose(arrivals) }
        let rawSamples = pipeline?.rawSamples ?? 0, detectorSamples = pipeline?.detectorSamples ?? 0
        let usage = ProcessUsage.current()
        let gaps = pipeline?.resampler?.gaps ?? 0
        let summary = "raw samples \(rawSamples), detector samples \(detectorSamples), overruns \(source.samples.overruns), gaps \(gaps), CPU \(String(format: "%.3f", usage.cpuSeconds)) s, max RSS \(usage.maxResidentKiB) KiB"
        if json {
            let end = MonotonicClock.nanoseconds()
            let running = atOpen.map { #","cpu_s_since_open":\#(usage.cpuSeconds - $0.usage.cpuSeconds),"wall_s_since_open":\#(Double(end - $0.t) * 1e-9)"# } ?? ""
            print(#"{"event":"summary","raw_samples":\#(rawSamples),"detector_samples":\#(detectorSamples),"overruns":\#(source.samples.overruns),"gaps":\#(gaps),"cpu_s":\#(usage.cpuSeconds),"max_rss_kib":\#(usage.maxResidentKiB),"wall_s":\#(Double(end - started) * 1e-9)\#(running),"cpu":"\#(sensorCPU)"}"#)
        } else {
            print(summary)
        }
    }

    func line(_ o: SensorPipeline.Output, _ enc: JSONEncoder) -> String {
        switch o {
        case .opened(let info):
            if json { return #"{"event":"opened","device":"\#(info.name)","mode":"\#(info.mode.rawValue)","rate":\#(info.samplingFrequency ?? 0)}"# }
            return "opened \(info.name) (\(info.id)): \(info.mode.rawValue), \(info.samplingFrequency ?? 0) Hz"
        case .health(let c):
            if json {
                let detail = String(decoding: try! enc.encode(c.detail), as: UTF8.self)
                return #"{"event":"\#(c.isFault ? "fault" : "recovered")","problem":"\#(c.problem.rawValue)","time":\#(c.time),"detail":\#(detail)}"#
            }
            return "\(String(format: "%.3f", c.time)) \(c.isFault ? "SENSOR FAULT" : "sensor recovered") \(c.problem.rawValue): \(c.detail)"
        case .detection(let d):
            if json { return #"{"event":"fall","impact":\#(d.impactTime),"decision":\#(d.decisionTime),"peak":\#(d.peak)}"# }
            return "\(String(format: "%.3f", d.decisionTime)) FALL SUSPECTED impact at \(String(format: "%.3f", d.impactTime)): \(d.reason)"
        }
    }
}
