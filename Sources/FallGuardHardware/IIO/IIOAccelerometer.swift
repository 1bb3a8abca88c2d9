import Atomics
import CLibIIO
import FallGuardCore
#if canImport(Glibc)
import Glibc
#endif

/// Which accelerometer to open and how.
public struct AccelerometerConfiguration: Sendable, Equatable {
    /// libiio context URI: `local:` on the Pi, `ip:host` for a sensor served by iiod.
    public var uri: String
    /// IIO device name (`adxl345`, `mpu6050`, …); nil: adxl345, then mpu6050, then the first
    /// device with accel_x/y/z channels.
    public var device: String?
    /// The rate the detector needs; the driver is set to the nearest supported rate ≥ this.
    public var minimumRate: Double
    /// Measuring range to ask for where the driver offers several scales (impacts exceed 4 g).
    public var minimumRangeG: Double
    /// Use the driver's buffer when it has one (else the `_raw` attributes are polled).
    public var preferBuffered: Bool
    /// Refuse a device without a buffer instead of polling it.
    public var requireBuffered: Bool
    /// The board's orientation (rows), replacing the driver's `mount_matrix`.
    public var mountMatrix: [[Double]]?
    /// The CPU of the sensor thread, which waits in the driver's buffer and consumes.
    public var cpu: SensorCPU
    /// Read the device's gyroscope (`anglvel_x/y/z`) with the accelerometer where it has one.
    public var readGyroscope: Bool
    /// Gyroscope range to ask for (±°/s) where the driver offers several scales.
    public var minimumRangeDPS: Double

    public init(uri: String = "local:", device: String? = nil, minimumRate: Double = 40,
                minimumRangeG: Double = 16, preferBuffered: Bool = true, requireBuffered: Bool = false,
                mountMatrix: [[Double]]? = nil, cpu: SensorCPU = .default, readGyroscope: Bool = true,
                minimumRangeDPS: Double = 2000) {
        self.uri = uri
        self.device = device
        self.minimumRate = minimumRate
        self.minimumRangeG = minimumRangeG
        self.preferBuffered = preferBuffered
        self.requireBuffered = requireBuffered
        self.cpu = cpu
        self.mountMatrix = mountMatrix
        self.readGyroscope = readGyroscope
        self.minimumRangeDPS = minimumRangeDPS
    }
}

/// A tri-axial accelerometer behind the Linux IIO subsystem, read through libiio, with the same
/// device's gyroscope where it has one (the MPU6050's `anglvel_x/y/z`, in the same scan).
///
/// `init` opens the context, finds the device, applies the ranges and rate (reading back what
/// the driver accepted); ``startCapture()``, then ``captureStep(into:)`` once per delivery,
/// push samples in g (and °/s), mount matrix applied, into a lock-free ring. One owner: the
/// thread that captures (the sensor thread, which also consumes).
public final class IIOAccelerometer: @unchecked Sendable {
    // Sendable: after init only the sensor thread (which captures) touches the C objects; `cancel()` uses
    // libiio's thread-safe iio_buffer_cancel through an atomic pointer.
    private let context: IIOContext
    private let attributes: AccelerometerAttributes
    public private(set) var info: AccelerometerInfo
    private let countsToG: Double
    private let matrix: [Double]   // row-major 3×3
    /// The gyroscope's channels while it is read, its °/s per count (`in_anglvel_scale` is
    /// rad/s) and its matrix (row-major; the accelerometer's mapping, times its determinant:
    /// angular velocity is an axial vector, so a mirrored frame also turns its sense).
    private let gyro: GyroscopeAttributes?
    private let countsToDPS: Double
    private let gyroMatrix: [Double]
    private let buffer = ManagedAtomic<Int>(0)   // iio_buffer pointer while a buffered capture runs
    public let configuration: AccelerometerConfiguration

    public var deviceLabel: String { "\(info.name) (\(info.id)) at \(configuration.uri)" }

    public init(_ configuration: AccelerometerConfiguration) throws(IIOError) {
        self.configuration = configuration
        let uri = configuration.uri
        context = try IIOContext(uri: uri)
        let candidates = context.devices.compactMap { AccelerometerAttributes(device: $0) }
        let chosen: AccelerometerAttributes?
        if let wanted = configuration.device {
            chosen = candidates.first { $0.device.iioDeviceName == wanted || $0.device.iioDeviceID == wanted }
            if chosen == nil {
                let names = candidates.map { $0.device.iioDeviceName ?? $0.device.iioDeviceID }
                throw IIOError(uri: uri, device: wanted, message: "no such accelerometer (found: \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
            }
        } else {
            chosen = candidates.first { $0.device.iioDeviceName == "adxl345" }
                ?? candidates.first { $0.device.iioDeviceName == "mpu6050" } ?? candidates.first
        }
        guard let a = chosen else {
            throw IIOError(uri: uri, message: "no IIO device with accel_x, accel_y and accel_z channels")
        }
        attributes = a
        let name = a.device.iioDeviceName ?? a.device.iioDeviceID

        // Range: the smallest scale that still covers the wanted range (int16 full scale).
        let scales = a.availableScales.sorted()
        if !scales.isEmpty {
            let full = Double(Int16.max)
            let pick = scales.first { $0 * full / standardGravity >= configuration.minimumRangeG } ?? scales.last!
            // A driver with one scale (the ADXL345 at full resolution) refuses the write with
            // EINVAL: not an error, the scale read back below is the one that counts.
            if let code = a.write("scale", String(pick)), code != EINVAL {
                throw IIOError(uri: uri, device: name, what: "cannot set in_accel_scale to \(pick)", code: code)
            }
        }
        guard let scale = a.scale, scale > 0, scale.isFinite else {
            throw IIOError(uri: uri, device: name, message: "no usable in_accel_scale")
        }

        // Rate: ask for the minimum; if the driver rounds below it, take the smallest listed rate above.
        if try a.checkedFrequency(uri: uri, device: name) != nil {
            let asked = attributeNumber(configuration.minimumRate)
            _ = a.write("sampling_frequency", asked)
            if (settledFrequency(a, wrote: asked) ?? 0) < configuration.minimumRate - 1e-6 {
                guard let up = a.availableFrequencies.sorted().first(where: { $0 >= configuration.minimumRate }) else {
                    throw IIOError(uri: uri, device: name, message: "no sampling frequency of \(configuration.minimumRate) Hz or more (available: \(a.availableFrequencies))")
                }
                if let code = a.write("sampling_frequency", attributeNumber(up)) {
                    throw IIOError(uri: uri, device: name, what: "cannot set sampling_frequency to \(up)", code: code)
                }
            }
        }
        _ = try a.checkedFrequency(uri: uri, device: name)   // what the driver settled on
        info = a.info(uri: uri)
        if configuration.requireBuffered, info.mode != .buffered {
            throw IIOError(uri: uri, device: name, message: "has no buffer, and buffered mode is required (sensor.mode: buffered)")
        }
        if !configuration.preferBuffered { info.mode = .polled }
        if let m = configuration.mountMatrix { info.mountMatrix = m }
        countsToG = scale / standardGravity
        matrix = (info.mountMatrix ?? Self.identity).flatMap { $0 }

        // The gyroscope: its range, then its scale as the driver reports it.
        if configuration.readGyroscope, let g = a.gyro, info.gyroscope != nil {
            let scales = g.availableScales.sorted()
            let full = Double(Int16.max) * degreesPerRadian
            // ±2000 °/s is 1998.9 °/s of int16 counts at the driver's 0.001064724 rad/s: 1 % slack.
            if let pick = scales.first(where: { $0 * full >= configuration.minimumRangeDPS * 0.99 }) ?? scales.last,
               g.scale != pick, let code = g.writeScale(String(pick)), code != EINVAL {
                throw IIOError(uri: uri, device: name, what: "cannot set in_anglvel_scale to \(pick)", code: code)
            }
            guard let gi = g.info() else {
                throw IIOError(uri: uri, device: name, message: "no usable in_anglvel_scale")
            }
            info.gyroscope = gi
            gyro = g
            countsToDPS = gi.scaleDPS
            // One axis mapping for both sensors: sensor.mount-matrix when configured, else the
            // driver's own matrix of each (inv_mpu6050 gives both from one device-tree property).
            let m = configuration.mountMatrix ?? gi.mountMatrix ?? info.mountMatrix ?? Self.identity
            let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
            gyroMatrix = m.flatMap { $0 }.map { $0 * (det < 0 ? -1 : 1) }
        } else {
            info.gyroscope = nil
            gyro = nil
            countsToDPS = 0
            gyroMatrix = []
        }
    }

    private static let identity: [[Double]] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]

    /// The rate the driver runs at (Hz).
    public var rate: Double { info.samplingFrequency ?? configuration.minimumRate }

    /// Samples per wake-up in buffered mode: the buffer's watermark (libiio 0.24 writes
    /// `buffer/watermark` = the buffer's sample count, so the kernel's poll() and blocking read
    /// return once that many samples are queued). ``batchSeconds`` of data: 16 samples at 40 Hz,
    /// 2.5 wake-ups a second instead of 40. The detector decides 2.475 s after an impact, so a
    /// decision comes at most one batch (0.4 s) later: under 3 s. Polled mode: 1.
    public var batchSamples: Int {
        info.mode == .buffered ? max(1, Int((rate * Self.batchSeconds).rounded(.down))) : 1
    }
    /// How much data one buffered wake-up carries (s).
    public static let batchSeconds = 0.4
    /// The time between two deliveries (s): one batch in buffered mode, one sample polled.
    public var deliveryPeriod: Double { Double(batchSamples) / rate }

    /// Sets up capture: enables the buffer (buffered) or opens the `_raw` files (polled).
    public func startCapture() -> IIOError? {
        info.mode == .buffered ? startBuffered() : startPolled()
    }

    /// Waits for the next delivery and pushes it into `ring`: one buffer refill (a batch of
    /// ``batchSamples``, or nothing when the refill timed out: a stall, which the consumer's
    /// health check reports), or one polled sample at its scheduled time. Blocks about
    /// ``deliveryPeriod``, at most ``deliveryPeriod`` + ``stallMargin``.
    public func captureStep(into ring: SPSCRingBuffer<AccelerationSample>) -> IIOError? {
        info.mode == .buffered ? refill(ring) : pollOnce(ring)
    }

    /// Releases what ``startCapture()`` set up.
    public func finishCapture() {
        let p = buffer.exchange(0, ordering: .acquiringAndReleasing)
        if p != 0 { iio_buffer_destroy(OpaquePointer(bitPattern: p)) }
        for fd in rawFiles where fd >= 0 { close(fd) }
        rawFiles = []
    }

    /// How much longer than a batch a refill may wait before it returns empty-handed, so that
    /// the consumer checks for a stall and pings the watchdog at least every
    /// ``deliveryPeriod`` + this.
    public static let stallMargin = 0.35

    /// Wakes a blocked buffered capture (from any thread); the capture then ends.
    public func cancel() {
        let p = buffer.load(ordering: .acquiring)
        if p != 0 { iio_buffer_cancel(OpaquePointer(bitPattern: p)) }
    }

    @inline(__always)
    private func sample(time: Double, _ cx: Int64, _ cy: Int64, _ cz: Int64) -> AccelerationSample {
        let x = Double(cx) * countsToG, y = Double(cy) * countsToG, z = Double(cz) * countsToG
        return AccelerationSample(
            time: time,
            x: matrix[0] * x + matrix[1] * y + matrix[2] * z,
            y: matrix[3] * x + matrix[4] * y + matrix[5] * z,
            z: matrix[6] * x + matrix[7] * y + matrix[8] * z)
    }

    /// Angular velocity in °/s from the gyroscope's counts, mounted as the accelerometer.
    @inline(__always)
    private func angularVelocity(_ gx: Int64, _ gy: Int64, _ gz: Int64) -> AngularVelocity {
        let x = Double(gx) * countsToDPS, y = Double(gy) * countsToDPS, z = Double(gz) * countsToDPS
        let m = gyroMatrix
        return AngularVelocity(x: m[0] * x + m[1] * y + m[2] * z, y: m[3] * x + m[4] * y + m[5] * z,
                               z: m[6] * x + m[7] * y + m[8] * z)
    }

    private func error(_ what: String, _ code: Int32) -> IIOError {
        IIOError(uri: configuration.uri, device: info.name, what: what, code: code)
    }

    // MARK: polled mode: the _raw attributes on a drift-free monotonic schedule

    /// For `local:` contexts the three `in_accel_*_raw` files (and the gyroscope's three
    /// `in_anglvel_*_raw`) stay open and are read with pread() at offset 0, as sysfs allows
    /// (each read at 0 asks the driver again): 3 (6) system calls a sample instead of libiio's
    /// open, fstat, read, read, close per attribute. Other contexts (`ip:`) go through libiio,
    /// the only way there.
    private var rawFiles: [Int32] = []
    private var nextPoll: Int64 = 0

    private func startPolled() -> IIOError? {
        nextPoll = MonotonicClock.nanoseconds()
        guard configuration.uri.hasPrefix("local:") else { return nil }
        let folder = "/sys/bus/iio/devices/\(info.id)/"
        for channel in polledChannels {
            let name = iio_channel_attr_get_filename(channel, "raw").map { String(cString: $0) } ?? ""
            let fd = open(folder + name, O_RDONLY | O_CLOEXEC)
            if fd < 0 {
                let code = errno
                finishCapture()
                return error("cannot open \(folder + name)", code)
            }
            rawFiles.append(fd)
        }
        return nil
    }

    /// The channels a poll reads, accelerometer first.
    private var polledChannels: [OpaquePointer] {
        [attributes.x, attributes.y, attributes.z] + (gyro.map { [$0.x, $0.y, $0.z] } ?? [])
    }

    private func pollOnce(_ ring: SPSCRingBuffer<AccelerationSample>) -> IIOError? {
        let periodNs = Int64((1e9 / rate).rounded())
        MonotonicClock.sleep(until: nextPoll)
        var cx: Int64 = 0, cy: Int64 = 0, cz: Int64 = 0
        var gx: Int64 = 0, gy: Int64 = 0, gz: Int64 = 0
        if rawFiles.count >= 3 {
            var r = readRaw(rawFiles[0], &cx)
            if r == 0 { r = readRaw(rawFiles[1], &cy) }
            if r == 0 { r = readRaw(rawFiles[2], &cz) }
            if r != 0 { return error("reading in_accel_*_raw failed", r) }
            if rawFiles.count == 6 {
                r = readRaw(rawFiles[3], &gx)
                if r == 0 { r = readRaw(rawFiles[4], &gy) }
                if r == 0 { r = readRaw(rawFiles[5], &gz) }
                if r != 0 { return error("reading in_anglvel_*_raw failed", r) }
            }
        } else {
            var r = iio_channel_attr_read_longlong(attributes.x, "raw", &cx)
            if r == 0 { r = iio_channel_attr_read_longlong(attributes.y, "raw", &cy) }
            if r == 0 { r = iio_channel_attr_read_longlong(attributes.z, "raw", &cz) }
            if r < 0 { return error("reading in_accel_*_raw failed", -r) }
            if let g = gyro {
                r = iio_channel_attr_read_longlong(g.x, "raw", &gx)
                if r == 0 { r = iio_channel_attr_read_longlong(g.y, "raw", &gy) }
                if r == 0 { r = iio_channel_attr_read_longlong(g.z, "raw", &gz) }
                if r < 0 { return error("reading in_anglvel_*_raw failed", -r) }
            }
        }
        var s = sample(time: MonotonicClock.seconds(), cx, cy, cz)
        if gyro != nil { s.gyro = angularVelocity(gx, gy, gz) }
        ring.push(s)
        nextPoll += periodNs
        let now = MonotonicClock.nanoseconds()
        if nextPoll < now - 10 * periodNs { nextPoll = now }   // fell far behind (suspend): don't burst
        return nil
    }

    // MARK: buffered mode: the driver's buffer, one blocking refill per watermark

    private func startBuffered() -> IIOError? {
        let dev = attributes.device
        for i in 0..<iio_device_get_channels_count(dev) {
            if let c = iio_device_get_channel(dev, i) { iio_channel_disable(c) }
        }
        // The gyroscope in the same scan: one interrupt, one FIFO datum, one timestamp for both.
        let channels = polledChannels
        channels.forEach { iio_channel_enable($0) }
        timestampOffset = 0
        if let ts = attributes.timestamp {
            iio_channel_enable(ts)
            // Kernel timestamps on the same clock as ours. inv_mpu6050 starts at realtime; a
            // driver that refuses the switch keeps its clock, and the difference is subtracted.
            if iio_device_find_attr(dev, "current_timestamp_clock") != nil {
                _ = iio_device_attr_write(dev, "current_timestamp_clock", "monotonic")
                let clock = settledClock(attributes)
                if clock != "monotonic" {
                    guard let id = clockID(clock) else {
                        return error("timestamps on clock '\(clock)', which cannot be converted", EINVAL)
                    }
                    timestampOffset = clockOffsetNanoseconds(id)
                }
            }
        }
        // A driver with its own data-ready trigger (MPU6050: mpu6050-devN) needs it selected.
        var current: OpaquePointer?
        if iio_device_get_trigger(dev, &current) != 0 || current == nil {
            let number = info.id.split(separator: "e").last.map(String.init) ?? ""
            let wanted = "\(info.name)-dev\(number)"
            if let trigger = context.devices.first(where: { iio_device_is_trigger($0) && $0.iioDeviceName == wanted }) {
                let r = iio_device_set_trigger(dev, trigger)
                if r < 0 { return error("cannot set trigger \(wanted)", -r) }
            }
        }
        // The refill returns after a whole batch, or empty-handed after the stall margin.
        _ = iio_context_set_timeout(context.pointer, UInt32(((deliveryPeriod + Self.stallMargin) * 1000).rounded(.up)))
        let count = batchSamples
        errno = 0
        guard let buf = iio_device_create_buffer(dev, count, false) else {
            return error("cannot create a buffer of \(count) samples", errno == 0 ? EIO : errno)
        }
        buffer.store(Int(bitPattern: UnsafeMutableRawPointer(buf)), ordering: .releasing)
        formats = channels.map { iio_channel_get_data_format($0)!.pointee }
        return nil
    }

    /// The data formats of the enabled channels, accelerometer x, y, z then gyroscope x, y, z.
    private var formats: [iio_data_format] = []
    /// Kernel timestamp minus CLOCK_MONOTONIC (ns) when the driver keeps another clock.
    private var timestampOffset: Int64 = 0

    private func refill(_ ring: SPSCRingBuffer<AccelerationSample>) -> IIOError? {
        let p = buffer.load(ordering: .acquiring)
        guard p != 0, let buf = OpaquePointer(bitPattern: p) else { return error("buffer cancelled", ECANCELED) }
        let n = iio_buffer_refill(buf)
        if n == -Int(ETIMEDOUT) || n == -Int(EAGAIN) {
            // No whole batch yet: a stall, which the consumer's health check judges, unless the
            // device is gone (the kernel then says ENODEV; a device node that only stopped
            // delivering, such as the emulator's FIFO, just times out).
            if configuration.uri.hasPrefix("local:"), access("/sys/bus/iio/devices/\(info.id)", F_OK) != 0 {
                return error("buffer refill failed", ENODEV)
            }
            return nil
        }
        if n < 0 { return error("buffer refill failed", Int32(-n)) }
        let arrival = Double(MonotonicClock.nanoseconds())
        let periodNs = 1e9 / rate
        let step = iio_buffer_step(buf)
        guard let end = iio_buffer_end(buf), step > 0 else { return nil }
        var px = iio_buffer_first(buf, attributes.x)!, py = iio_buffer_first(buf, attributes.y)!
        var pz = iio_buffer_first(buf, attributes.z)!
        let ts = attributes.timestamp
        var pt = ts.map { iio_buffer_first(buf, $0)! }
        // The gyroscope's elements of the same scans (nil pointers without one).
        var pg = gyro.map { (iio_buffer_first(buf, $0.x)!, iio_buffer_first(buf, $0.y)!, iio_buffer_first(buf, $0.z)!) }
        let samples = (end - px) / step
        var k = 0
        var raw: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var rawGyro: (UInt64, UInt64, UInt64) = (0, 0, 0)
        while px < end {
            iio_channel_convert(attributes.x, &raw.0, px)
            iio_channel_convert(attributes.y, &raw.1, py)
            iio_channel_convert(attributes.z, &raw.2, pz)
            let time: Double
            if let p = pt {
                iio_channel_convert(ts!, &raw.3, p)
                time = Double(Int64(bitPattern: raw.3) &- timestampOffset) * 1e-9
                pt = p + step
            } else {
                time = (arrival - Double(samples - 1 - k) * periodNs) * 1e-9
            }
            var s = sample(time: time, signExtend(raw.0, formats[0]), signExtend(raw.1, formats[1]), signExtend(raw.2, formats[2]))
            if let g = gyro, let p = pg {
                iio_channel_convert(g.x, &rawGyro.0, p.0)
                iio_channel_convert(g.y, &rawGyro.1, p.1)
                iio_channel_convert(g.z, &rawGyro.2, p.2)
                s.gyro = angularVelocity(signExtend(rawGyro.0, formats[3]), signExtend(rawGyro.1, formats[4]),
                                         signExtend(rawGyro.2, formats[5]))
                pg = (p.0 + step, p.1 + step, p.2 + step)
            }
            ring.push(s)
            px += step; py += step; pz += step
            k += 1
        }
        return nil
    }
}

/// Reads a decimal attribute through an open sysfs file (pread at 0). 0, or the errno:
/// ENODEV for an empty read (a removed device), EINVAL for text that is not a number
/// (``IIOAttributeText/raw(_:_:)``).
@inline(__always)
func readRaw(_ fd: Int32, _ value: inout Int64) -> Int32 {
    var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes, no allocation
    return withUnsafeMutableBytes(of: &bytes) { b -> Int32 in
        let n = pread(fd, b.baseAddress, b.count, 0)
        if n < 0 { return errno }
        return IIOAttributeText.raw(UnsafeRawBufferPointer(rebasing: b[0..<n]), &value)
    }
}

/// `current_timestamp_clock` after a write: a driver emulated in user space applies it a
/// moment later, so the text is read again for up to 100 ms while it differs from "monotonic".
func settledClock(_ a: AccelerometerAttributes) -> String {
    var clock = ""
    for _ in 0..<5 {
        clock = a.device.iioDeviceAttribute("current_timestamp_clock") ?? ""
        if clock == "monotonic" { break }
        MonotonicClock.sleep(until: MonotonicClock.nanoseconds() + 20_000_000)
    }
    return clock
}

/// The clock behind a `current_timestamp_clock` name (the kernel's list).
func clockID(_ name: String) -> clockid_t? {
    switch name {
    case "realtime": return CLOCK_REALTIME
    case "monotonic": return CLOCK_MONOTONIC
    case "monotonic_raw": return CLOCK_MONOTONIC_RAW
    case "realtime_coarse": return CLOCK_REALTIME_COARSE
    case "monotonic_coarse": return CLOCK_MONOTONIC_COARSE
    case "boottime": return CLOCK_BOOTTIME
    case "tai": return CLOCK_TAI
    default: return nil
    }
}

/// `clock` minus CLOCK_MONOTONIC now (ns), from the tightest of five bracketing reads.
func clockOffsetNanoseconds(_ clock: clockid_t) -> Int64 {
    var best: (Int64, Int64)?
    for _ in 0..<5 {
        let a = MonotonicClock.nanoseconds()
        var ts = timespec()
        clock_gettime(clock, &ts)
        let b = MonotonicClock.nanoseconds()
        let c = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        if best == nil || b - a < best!.0 { best = (b - a, c - (a + (b - a) / 2)) }
    }
    return best!.1
}

/// The rate the driver settled on after `wrote` was written to `sampling_frequency`. A kernel
/// driver applies a sysfs write before write() returns; a driver emulated in user space
/// (tools/iio-emulator) applies it a moment later, so a readback that still shows exactly the
/// text written is read again, every 20 ms for up to 100 ms, before it is believed.
func settledFrequency(_ a: AccelerometerAttributes, wrote: String) -> Double? {
    for _ in 0..<5 {
        guard let text = a.read("sampling_frequency")?.trimmed,
              text == wrote else { break }
        MonotonicClock.sleep(until: MonotonicClock.nanoseconds() + 20_000_000)
    }
    return a.frequency
}

/// Integers without a decimal point: some drivers (inv_mpu6050's sampling_frequency) parse
/// with kstrtoint and reject "40.0".
func attributeNumber(_ v: Double) -> String {
    v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
}

/// The converted value in its storage width, as a signed or unsigned integer.
@inline(__always)
func signExtend(_ v: UInt64, _ f: iio_data_format) -> Int64 {
    switch f.length {
    case 8: return f.is_signed ? Int64(Int8(truncatingIfNeeded: v)) : Int64(UInt8(truncatingIfNeeded: v))
    case 16: return f.is_signed ? Int64(Int16(truncatingIfNeeded: v)) : Int64(UInt16(truncatingIfNeeded: v))
    case 32: return f.is_signed ? Int64(Int32(truncatingIfNeeded: v)) : Int64(UInt32(truncatingIfNeeded: v))
    default: return Int64(bitPattern: v)
    }
}
