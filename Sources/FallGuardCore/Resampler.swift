/// Turns a sensor stream at any rate (25–1000 Hz, jittery timestamps) into the detector's
/// 40 Hz grid.
///
/// Above 40 Hz the input first goes through a moving average of about one output period
/// (`round(inputRate / 40)` samples: 25 ms at any rate), a cheap anti-alias filter; then the
/// filtered stream is linearly interpolated at exact 40 Hz grid times, so timing jitter in
/// the input moves no output sample off the grid. A 40 Hz input with regular timestamps comes
/// out unchanged.
///
/// A sensor already running at the output rate (an MPU6050 at exactly 40 Hz) is passed through
/// sample for sample with its own timestamps: interpolating a jittery 40 Hz stream onto a
/// 40 Hz grid would blur impact peaks, which the detectors were tuned on.
///
/// A gyroscope's angular velocity, where the samples carry one, goes through the same average
/// and interpolation as the acceleration (an output sample between one with and one without
/// has none).
///
/// A gap longer than ``maximumGap`` is not bridged: the grid restarts at the next sample and
/// the gap is counted, so the detector never sees invented data. Samples whose time does not
/// advance are dropped and counted.
///
/// O(1) work per input sample and no allocation after `init`.
public struct Resampler: Sendable {
    public let inputRate: Double
    public let outputRate: Double
    public let maximumGap: Double
    /// Input samples averaged per filtered sample.
    public let averagingLength: Int
    /// True when the input runs at the output rate and samples pass through unchanged.
    public let passThrough: Bool

    public private(set) var gaps = 0
    public private(set) var outOfOrder = 0
    public private(set) var inputCount = 0
    public private(set) var outputCount = 0
    /// Output periods that fell inside gaps and were not produced.
    public private(set) var missingOutputs = 0

    private var window: [AccelerationSample]
    private var windowFill = 0
    private var windowNext = 0
    private var previous: AccelerationSample?   // last filtered sample
    private var lastInputTime = -Double.infinity
    private var origin = 0.0
    private var nextIndex: Int64 = 0

    /// Rates a sensor may report, in Hz (the ADXL345 goes down to 0.1 Hz, nothing worn runs at
    /// 10 kHz); a rate is the driver's word, or a remote iiod's, so it is checked.
    public static let rates: ClosedRange<Double> = 0.1...10_000
    /// Longest gap that may be bridged, in seconds: it bounds the output of one input sample.
    public static let gaps: ClosedRange<Double> = 0.001...10

    /// - Parameters:
    ///   - inputRate: the sensor's nominal rate in Hz (what the driver reports).
    ///   - outputRate: 40 Hz for the detectors.
    ///   - maximumGap: seconds without input after which the grid restarts.
    /// - Throws: ``ResamplerError`` when a rate is outside ``rates`` or the gap outside ``gaps``.
    public init(inputRate: Double, outputRate: Double = detectorRate, maximumGap: Double = 0.25) throws(ResamplerError) {
        for (what, value, range) in [("input rate", inputRate, Self.rates), ("output rate", outputRate, Self.rates),
                                     ("maximum gap", maximumGap, Self.gaps)] where !range.contains(value) {
            throw ResamplerError(what: what, value: value, range: range)
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.maximumGap = maximumGap
        averagingLength = max(1, Int((inputRate / outputRate).rounded()))
        passThrough = abs(inputRate - outputRate) <= 0.01 * outputRate
        window = Array(repeating: AccelerationSample(time: 0, x: 0, y: 0, z: 0), count: averagingLength)
    }

    /// The steady rate of a recorded stream, in Hz: one over the median step between its
    /// samples, to six decimals (40 Hz for fewer than two samples). What a replayed recording
    /// announces as its driver's rate, so that `evaluate`, `replay` and the daemon resample it
    /// alike (a 50 Hz recording taken as 40 Hz would run 1.25 times too fast).
    public static func rate(of samples: [AccelerationSample]) -> Double {
        guard samples.count > 1 else { return detectorRate }
        let steps = zip(samples.dropFirst(), samples).map { $0.time - $1.time }.sorted()
        let median = steps[steps.count / 2]
        guard median > 0 else { return detectorRate }
        return ((1 / median) * 1e6).rounded() / 1e6
    }

    /// Feeds one input sample; calls `emit` for every 40 Hz sample that becomes available.
    public mutating func process(_ sample: AccelerationSample, emit: (AccelerationSample) -> Void) {
        guard sample.time > lastInputTime, sample.time.isFinite else {
            outOfOrder += 1
            return
        }
        inputCount += 1
        if sample.time - lastInputTime > maximumGap, previous != nil {
            // Count the grid points that the gap swallowed, then start afresh.
            let period = 1 / outputRate
            if passThrough {
                missingOutputs = missingOutputs.addingSaturated(Int(saturating: ((sample.time - lastInputTime) / period).rounded()) - 1)
            } else {
                let lastGrid = origin + Double(nextIndex) * period
                missingOutputs = missingOutputs.addingSaturated(Int(saturating: ((sample.time - lastGrid) / period).rounded(.down)))
            }
            gaps += 1
            previous = nil
            windowFill = 0
            windowNext = 0
        }
        lastInputTime = sample.time
        if passThrough {
            previous = sample
            outputCount += 1
            emit(sample)
            return
        }

        // Moving average over the last `averagingLength` input samples.
        window[windowNext] = sample
        windowNext = windowNext + 1 == averagingLength ? 0 : windowNext + 1
        if windowFill < averagingLength { windowFill += 1 }
        if windowFill < averagingLength { return }
        let filtered = averagingLength == 1 ? sample : average()

        guard let a = previous else {
            previous = filtered
            origin = filtered.time
            nextIndex = 1
            outputCount += 1
            emit(filtered)
            return
        }
        let period = 1 / outputRate
        var t = origin + Double(nextIndex) * period
        let span = filtered.time - a.time
        while t <= filtered.time {
            let f = (t - a.time) / span
            outputCount += 1
            var out = AccelerationSample(
                time: t,
                x: a.x + (filtered.x - a.x) * f,
                y: a.y + (filtered.y - a.y) * f,
                z: a.z + (filtered.z - a.z) * f)
            if let ga = a.gyro, let gb = filtered.gyro {
                out.gyro = AngularVelocity(x: ga.x + (gb.x - ga.x) * f, y: ga.y + (gb.y - ga.y) * f, z: ga.z + (gb.z - ga.z) * f)
            }
            emit(out)
            nextIndex += 1
            t = origin + Double(nextIndex) * period
        }
        previous = filtered
    }

    private func average() -> AccelerationSample {
        // Times are averaged relative to the newest sample to keep precision on long uptimes.
        let newest = window[(windowNext + averagingLength - 1) % averagingLength].time
        var dt = 0.0, x = 0.0, y = 0.0, z = 0.0
        var g = (x: 0.0, y: 0.0, z: 0.0), allGyro = true
        for s in window {
            dt += s.time - newest
            x += s.x
            y += s.y
            z += s.z
            if let w = s.gyro { g.x += w.x; g.y += w.y; g.z += w.z } else { allGyro = false }
        }
        let n = Double(averagingLength)
        return AccelerationSample(time: newest + dt / n, x: x / n, y: y / n, z: z / n,
                                  gyro: allGyro ? AngularVelocity(x: g.x / n, y: g.y / n, z: g.z / n) : nil)
    }
}

/// A rate or gap a ``Resampler`` cannot work with.
public struct ResamplerError: Error, Equatable, CustomStringConvertible {
    public var what: String
    public var value: Double
    public var range: ClosedRange<Double>

    public var description: String { "\(what) \(value) is outside \(range.lowerBound)...\(range.upperBound)" }
}

extension Int {
    /// `self + max(0, n)`, stopping at `Int.max`: a count of what a gap swallowed.
    fileprivate func addingSaturated(_ n: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(Swift.max(0, n))
        return overflow ? .max : sum
    }
}
