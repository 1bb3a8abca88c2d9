// fallguard-bench: throughput of the sample path, on one core.
//
// Usage: fallguard-bench [DATASET_DIR] [--seconds S]
// Streams every recording of the dataset (or the bundled demo when none is given) through
// the default detector, the ring buffer and the resampler, and prints samples per second.
import Dispatch
import FallGuardCore
import FallGuardFieldTest

var args = Array(CommandLine.arguments.dropFirst())
var secondsOption = 2.0
if let i = args.firstIndex(of: "--seconds"), i + 1 < args.count {
    secondsOption = Double(args[i + 1]) ?? 2
    args.removeSubrange(i...(i + 1))
}
let minimumSeconds = secondsOption

var samples: [AccelerationSample] = []
if let dir = args.first {
    let dataset = try Dataset.scan(dir)
    for rec in try readAll(dataset) { samples += rec.samples }
    print("input: \(dataset.trials.count) recordings from \(dir), \(samples.count) samples")
} else {
    samples = BundledRecordings.parse(BundledRecordings.demoFall).samples
    print("input: bundled demo, \(samples.count) samples")
}
// Continuous stream time, as a live sensor gives.
for i in samples.indices { samples[i].time = Double(i) / detectorRate }

let clock = ContinuousClock()

/// Runs `body` (which processes `perRun` samples) until at least `minimumSeconds` have passed;
/// returns samples per second of the fastest of several passes.
@MainActor
func measure(_ label: String, perRun: Int, _ body: () -> Int) -> Double {
    var best = 0.0
    var total = 0.0
    var sink = 0
    while total < minimumSeconds {
        let start = clock.now
        sink &+= body()
        let d = clock.now - start
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        total += seconds
        best = max(best, Double(perRun) / seconds)
    }
    print("\(label): \(Double(Int(best / 1e5)) / 10) million samples/s (best pass; checksum \(sink))")
    return best
}

// 1. The default detector alone.
let detectorRateMeasured = measure("multiphase detector", perRun: samples.count) {
    var d = MultiphaseDetector()
    var n = 0
    for s in samples where d.process(s) != nil { n += 1 }
    return n
}
// The six-axis detector (issue 35): on samples with a gyroscope it keeps three more numbers per
// sample; on three-axis samples it is the multiphase detector.
_ = measure("sixaxis detector (\(samples.first?.gyro == nil ? "no gyroscope in this input" : "with the gyroscope"))", perRun: samples.count) {
    var d = SixAxisDetector()
    var n = 0
    for s in samples where d.process(s) != nil { n += 1 }
    return n
}
_ = measure("sum-abs detector", perRun: samples.count) {
    var d = SumAbsDetector()
    var n = 0
    for s in samples where d.process(s) != nil { n += 1 }
    return n
}
// Through the protocol existential, as the daemon calls it.
_ = measure("multiphase detector via `any FallDetector`", perRun: samples.count) {
    var d: any FallDetector = MultiphaseDetector()
    var n = 0
    for s in samples where d.process(s) != nil { n += 1 }
    return n
}

// What the wearer is doing (issue 26): steps and not worn, beside the detector on the same samples.
_ = measure("walking detector", perRun: samples.count) {
    var w = WalkingDetector()
    var n = 0
    for s in samples where w.process(s) { n += 1 }
    return n
}
_ = measure("not-worn detector", perRun: samples.count) {
    var w = NotWornDetector(settings: .init(after: 60))
    var n = 0
    for s in samples where w.process(s) { n += 1 }
    return n
}

// 2. The ring buffer, push then pop, one thread.
let ring = SPSCRingBuffer<AccelerationSample>(minimumCapacity: 1024)
_ = measure("ring buffer push+pop", perRun: samples.count) {
    var n = 0
    var i = 0
    while i < samples.count {
        let end = min(i + 512, samples.count)
        for j in i..<end { ring.push(samples[j]) }
        n += ring.drain { _ in }
        i = end
    }
    return n
}

// 3. The resampler from 100 Hz (ADXL345) to 40 Hz.
let at100: [AccelerationSample] = samples.prefix(400_000).enumerated().map { i, s in
    AccelerationSample(time: Double(i) / 100, x: s.x, y: s.y, z: s.z)
}
_ = measure("resampler 100 Hz -> 40 Hz (input samples)", perRun: at100.count) {
    var r = try! Resampler(inputRate: 100)   // a constant rate in range
    var n = 0
    for s in at100 { r.process(s) { _ in n += 1 } }
    return n
}

let bar = 10e6
print("bar: default detector >= 10 million samples/s on one core: \(detectorRateMeasured >= bar ? "MET" : "NOT MET")")
