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
    var cpu: SensorCPU = .default

    @OptionGroup var detectorOptions: DetectorOptions

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: ArgumentHelp("Write each raw sample as it reaches the pipeline: CLOCK_MONOTONIC ns,x,y,z (g), and gx,gy,gz (°/s) from a sensor with a gyroscope, one per line.", valueName: "file"))
    var arrivalLog: String?

    @Option(help: ArgumentHelp("Hold the sensor thread once for MS milliseconds when the stream is AT seconds old, as a slow consumer would (what capture does meanwhile: see ARCHITECTURE.md).", valueName: "AT:MS", visibility: .hidden))
    var stall: String?

    func validate() throws { try requireOption("rate", rate, in: Resampler.rates) }

    func run() throws {
        let detector = try detectorOptions.configuration().makeDetector()
        let (stop, signals) = stopOnSignals()
        defer { signals.forEach { $0.cancel() } }
        let sensorCPU = cpu
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
        let endNs = duration.map { started + $0.nanoseconds } ?? .max
        let json = json   // read once: property wrappers are not free in a loop that runs 40 times a second
        let stallAt = try stall.map(Self.stall(_:))
        // Start-up (libiio context, device set-up) is measured apart from the steady capture.
        var atOpen: (usage: ProcessUsage, t: Int64)?
        var steps = StepRange()
        let pipeline = loop.run(while: { !stop.load(ordering: .acquiring) && MonotonicClock.nanoseconds() < endNs },
                                prepare: { p in
                                    var stalled = stallAt == nil
                                    p.onRawSample = { s in
                                        if let file {
                                            if let g = s.gyro {
                                                fputs("\(MonotonicClock.nanoseconds()),\(s.x),\(s.y),\(s.z),\(g.x),\(g.y),\(g.z)\n", file)
                                            } else {
                                                fputs("\(MonotonicClock.nanoseconds()),\(s.x),\(s.y),\(s.z)\n", file)
                                            }
                                        }
                                        steps.add(s.time)
                                        if !stalled, let (at, ms) = stallAt, s.time - steps.first >= at {
                                            stalled = true
                                            MonotonicClock.sleep(until: MonotonicClock.nanoseconds() + Int64(ms) * 1_000_000)
                                        }
                                    }
                                }) { output in
            if case .opened = output, atOpen == nil { atOpen = (ProcessUsage.current(), MonotonicClock.nanoseconds()) }
            if json { Self.emitJSON(output) } else { print(Self.text(output)) }
            flushStandardOutput()
        }
        source.stopAndWait()
        if let arrivals { fclose(arrivals) }
        let rawSamples = pipeline?.rawSamples ?? 0, detectorSamples = pipeline?.detectorSamples ?? 0
        let usage = ProcessUsage.current()
        let gaps = pipeline?.resampler?.gaps ?? 0
        if json {
            let end = MonotonicClock.nanoseconds()
            emit("summary", Summary(rawSamples: rawSamples, detectorSamples: detectorSamples, overruns: source.samples.overruns,
                                    gaps: gaps, minStepS: steps.min, maxStepS: steps.max, cpuS: usage.cpuSeconds,
                                    maxRssKib: usage.maxResidentKiB, wallS: Double(end - started) * 1e-9,
                                    cpuSSinceOpen: atOpen.map { usage.cpuSeconds - $0.usage.cpuSeconds },
                                    wallSSinceOpen: atOpen.map { Double(end - $0.t) * 1e-9 }, cpu: sensorCPU.description))
        } else {
            print("raw samples \(rawSamples), detector samples \(detectorSamples), overruns \(source.samples.overruns), gaps \(gaps), CPU \(String(format: "%.3f", usage.cpuSeconds)) s, max RSS \(usage.maxResidentKiB) KiB")
        }
    }

    /// `AT:MS` of `--stall`.
    static func stall(_ text: String) throws -> (Double, Int) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let at = Double(parts[0]), let ms = Int(parts[1]), at >= 0, (0...10_000).contains(ms) else {
            throw ValidationError("--stall: AT:MS, seconds into the stream and milliseconds (0...10000), e.g. 5:200")
        }
        return (at, ms)
    }

    /// The end of a `--json` run.
    struct Summary: Encodable {
        var rawSamples: Int, detectorSamples: Int, overruns: Int, gaps: Int
        /// The shortest and longest step between two raw samples' times (the driver's timestamps when buffered).
        var minStepS: Double?, maxStepS: Double?
        var cpuS: Double, maxRssKib: Int, wallS: Double
        var cpuSSinceOpen: Double?, wallSSinceOpen: Double?
        var cpu: String
    }

    /// The shortest and longest step between consecutive sample times.
    struct StepRange {
        var first = 0.0, last: Double?
        var min: Double?, max: Double?

        mutating func add(_ t: Double) {
            if let last {
                let step = t - last
                min = Swift.min(min ?? step, step)
                max = Swift.max(max ?? step, step)
            } else {
                first = t
            }
            last = t
        }
    }

    static func emitJSON(_ o: SensorPipeline.Output) {
        switch o {
        case .opened(let info):
            struct Opened: Encodable { var device: String; var mode: String; var rate: Double; var gyroscope: Bool }
            emit("opened", Opened(device: info.name, mode: info.mode.rawValue, rate: info.samplingFrequency ?? 0,
                                  gyroscope: info.gyroscope != nil))
        case .health(let c):
            struct Health: Encodable { var problem: String; var time: Double; var detail: String }
            emit(c.isFault ? "fault" : "recovered", Health(problem: c.problem.rawValue, time: c.time, detail: c.detail))
        case .detection(let d):
            struct Fall: Encodable { var impact: Double; var decision: Double; var peak: Double }
            emit("fall", Fall(impact: d.impactTime, decision: d.decisionTime, peak: d.peak))
        }
    }

    static func text(_ o: SensorPipeline.Output) -> String {
        switch o {
        case .opened(let info):
            "opened \(info.name) (\(info.id)): \(info.mode.rawValue), \(info.samplingFrequency ?? 0) Hz, \(info.axes)"
        case .health(let c):
            "\(String(format: "%.3f", c.time)) \(c.isFault ? "SENSOR FAULT" : "sensor recovered") \(c.problem.rawValue): \(c.detail)"
        case .detection(let d):
            "\(String(format: "%.3f", d.decisionTime)) FALL SUSPECTED impact at \(String(format: "%.3f", d.impactTime)): \(d.reason)"
        }
    }
}
