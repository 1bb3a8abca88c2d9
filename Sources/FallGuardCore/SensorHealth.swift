/// A way a sensor stream can be unhealthy.
public enum SensorProblem: String, Sendable, Codable, CaseIterable {
    /// No sample for longer than the stall limit (1 s).
    case stalled
    /// Bit-identical readings for 60 s: real sensors always jitter.
    case stuck
    /// An axis pinned at full scale for longer than an impact lasts (1 s).
    case saturated
    /// At rest, but the norm is far from 1 g for 10 s (wrong scale, broken axis), or values
    /// that are not numbers or beyond any accelerometer's range (±64 g).
    case implausible
    /// The driver returned errors.
    case ioError = "io-error"
    /// The device is gone (unplugged, driver unbound).
    case disappeared
    /// Not the accelerometer: the daemon's storage (the state directory read-only, full, or not
    /// its own; the outbox cannot be opened). Falls are still detected and alerts sent, from
    /// memory; the health monitor never reports it, the daemon does (a device-problem alert).
    case storage
    /// Not a fault of the accelerometer: only its own noise for minutes, in a posture a body
    /// does not hold that still: the device lies somewhere instead of on the wearer, and falls
    /// cannot be detected on it. The daemon's wear watch (``NotWornDetector``) reports it,
    /// never the health monitor.
    case notWorn = "not-worn"
    /// Not the accelerometer: the device's battery is low (`power.battery-low`) while nothing
    /// charges it. Falls are still detected; the daemon's power watch reports it (``PowerWatch``).
    case batteryLow = "battery-low"
    /// The battery is at its last percent (`power.battery-critical`): the device stops soon.
    case shuttingDown = "shutting-down"
    /// The mains has been gone for `power.on-battery-after` seconds: running on the battery.
    case onBattery = "on-battery"
    /// Not the accelerometer: the cellular modem cannot send (no SIM, PIN-locked, no signal,
    /// unplugged, ModemManager not running). Falls are still detected; alerts go by the other
    /// channels, and a `modem` channel's deliveries wait.
    case modem
}

/// A problem starting or ending, for the log and the alert engine.
public struct SensorHealthChange: Sendable, Equatable {
    public var problem: SensorProblem
    /// True when the problem starts, false when it ends.
    public var isFault: Bool
    public var time: Double
    public var detail: String

    public init(problem: SensorProblem, isFault: Bool, time: Double, detail: String) {
        (self.problem, self.isFault, self.time, self.detail) = (problem, isFault, time, detail)
    }
}

/// Watches the raw sensor stream (before resampling) for stalls, stuck and saturated
/// readings and implausible values. Pure: fed with samples and the current time.
///
/// O(1) work per sample, no allocation except when a problem starts or ends.
public struct SensorHealthMonitor: Sendable {
    public struct Limits: Sendable, Equatable {
        public var stallAfter = 1.0
        public var stuckAfter = 60.0
        /// |axis| at or above this is saturated (the sensor's full scale, in g).
        public var fullScaleG: Double
        public var saturatedFor = 1.0
        /// Length of the blocks over which rest and the norm are judged.
        public var restBlock = 10.0
        /// Std of the norm below this means the wearer is at rest.
        public var restDeviation = 0.05
        /// At rest the norm must be within 1 g ± this.
        public var normTolerance = 0.3

        public init(fullScaleG: Double) { self.fullScaleG = fullScaleG }
    }

    public let limits: Limits
    public private(set) var active: Set<SensorProblem> = []

    private var lastTime: Double?
    private var timestampTrouble: Double?
    private var last: (Double, Double, Double)?
    private var identicalSince: Double?
    private var saturatedSince: Double?
    private var blockStart: Double?
    private var blockCount = 0.0, blockSum = 0.0, blockSquares = 0.0

    public init(limits: Limits) { self.limits = limits }

    /// Feeds one raw sample that arrived at `now` (same monotonic clock as its timestamp);
    /// returns the changes it causes (usually none). A sample whose timestamp is more than
    /// 2 s away from its arrival is implausible and is not counted as a sign of life.
    public mutating func observe(_ s: AccelerationSample, now: Double) -> [SensorHealthChange] {
        var changes: [SensorHealthChange] = []
        guard s.time.isFinite, abs(s.time - now) <= 2 else {
            start(.implausible, at: now, "sample timestamps are off the monotonic clock", &changes)
            timestampTrouble = now
            return changes
        }
        if let t = timestampTrouble, now - t > 1, active.contains(.implausible), s.x.isFinite {
            timestampTrouble = nil
            end(.implausible, at: now, "timestamps plausible again", &changes)
        }
        if let t = lastTime, active.contains(.stalled) {
            end(.stalled, at: s.time, "samples again after \(seconds(s.time - t))", &changes)
        }
        lastTime = s.time
        if active.contains(.disappeared) { end(.disappeared, at: s.time, "device is back", &changes) }
        if active.contains(.ioError) { end(.ioError, at: s.time, "reading again", &changes) }

        guard s.isPhysical else {
            start(.implausible, at: s.time, "values that are not numbers or beyond ±\(Int(AccelerationSample.physicalLimit)) g", &changes)
            return changes
        }

        // Stuck: bit-identical readings.
        if let l = last, l.0 == s.x, l.1 == s.y, l.2 == s.z {
            if identicalSince == nil { identicalSince = lastTime }
            if let since = identicalSince, s.time - since >= limits.stuckAfter {
                start(.stuck, at: s.time, "bit-identical readings for \(seconds(s.time - since))", &changes)
            }
        } else {
            identicalSince = nil
            if active.contains(.stuck) { end(.stuck, at: s.time, "readings change again", &changes) }
        }
        last = (s.x, s.y, s.z)

        // Saturated: any axis at full scale for longer than an impact.
        let limit = limits.fullScaleG * 0.999
        if abs(s.x) >= limit || abs(s.y) >= limit || abs(s.z) >= limit {
            if saturatedSince == nil { saturatedSince = s.time }
            if let since = saturatedSince, s.time - since >= limits.saturatedFor {
                start(.saturated, at: s.time, "an axis at full scale (±\(limits.fullScaleG) g) for \(seconds(s.time - since))", &changes)
            }
        } else {
            saturatedSince = nil
            if active.contains(.saturated) { end(.saturated, at: s.time, "back within range", &changes) }
        }

        // Implausible: at rest, norm far from 1 g, judged over whole blocks.
        let m = s.magnitude
        if blockStart == nil { blockStart = s.time }
        blockCount += 1
        blockSum += m
        blockSquares += m * m
        if s.time - blockStart! >= limits.restBlock {
            let mean = blockSum / blockCount
            let deviation = max(0, blockSquares / blockCount - mean * mean).squareRoot()
            if deviation < limits.restDeviation {
                if abs(mean - 1) > limits.normTolerance {
                    start(.implausible, at: s.time, "at rest but |a| = \(formatNumber(mean)) g, not 1 g", &changes)
                } else if active.contains(.implausible) {
                    end(.implausible, at: s.time, "|a| at rest is \(formatNumber(mean)) g again", &changes)
                }
            }
            blockStart = s.time
            blockCount = 0
            blockSum = 0
            blockSquares = 0
        }
        return changes
    }

    /// Checks for a stall at `now` (call it on a timer, e.g. every 100 ms).
    public mutating func check(now: Double) -> [SensorHealthChange] {
        var changes: [SensorHealthChange] = []
        if let t = lastTime, now - t > limits.stallAfter, !active.contains(.stalled) {
            start(.stalled, at: now, "no sample for \(seconds(now - t))", &changes)
        }
        return changes
    }

    /// Reports a problem the source saw itself (I/O errors, a vanished device).
    public mutating func report(_ problem: SensorProblem, at now: Double, detail: String) -> [SensorHealthChange] {
        var changes: [SensorHealthChange] = []
        start(problem, at: now, detail, &changes)
        return changes
    }

    /// The time base changed (the device was reopened): forget timing history.
    public mutating func restart() {
        last = nil
        identicalSince = nil
        saturatedSince = nil
        blockStart = nil
        blockCount = 0
        blockSum = 0
        blockSquares = 0
    }

    private mutating func start(_ p: SensorProblem, at t: Double, _ detail: String, _ changes: inout [SensorHealthChange]) {
        guard !active.contains(p) else { return }
        active.insert(p)
        changes.append(SensorHealthChange(problem: p, isFault: true, time: t, detail: detail))
    }

    private mutating func end(_ p: SensorProblem, at t: Double, _ detail: String, _ changes: inout [SensorHealthChange]) {
        guard active.contains(p) else { return }
        active.remove(p)
        changes.append(SensorHealthChange(problem: p, isFault: false, time: t, detail: detail))
    }

    private func seconds(_ v: Double) -> String { "\(formatNumber(v).dropLast(2)) s" }
}
