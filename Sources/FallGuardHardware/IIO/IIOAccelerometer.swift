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
    /// The CPU of the capture thread (and of the consumer, which follows it).
    public var cpu: SensorCPU

    public init(uri: String = "local:", device: String? = nil, minimumRate: Double = 40,
                minimumRangeG: Double = 16, preferBuffered: Bool = true, requireBuffered: Bool = false,
                mountMatrix: [[Double]]? = nil, cpu: SensorCPU = .default) {
        self.uri = uri
        self.device = device
        self.minimumRate = minimumRate
        self.minimumRangeG = minimumRangeG
        self.preferBuffered = preferBuffered
        self.requireBuffered = requireBuffered
        self.cpu = cpu
        self.mountMatrix = mountMatrix
    }
}

/// A tri-axial accelerometer behind the Linux IIO subsystem, read through libiio.
///
/// `init` opens the context, finds the device, applies the range and rate (reading back what
/// the driver accepted); ``capture(into:stop:)`` then streams samples in g, mount matrix
/// applied, into a lock-free ring until stopped or until the device fails. One owner: the
/// capture thread.
public final class IIOAccelerometer: @unchecked Sendable {
    // Sendable: after init only the capture thread touches the C objects; `cancel()` uses
    // libiio's thread-safe iio_buffer_cancel through an atomic pointer.
    private let context: IIOContext
    private let attributes: AccelerometerAttributes
    public private(set) var info: AccelerometerInfo
    private let countsToG: Double
    private let matrix: [Double]   // row-major 3×3
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
            if let code = a.write("scale", String(pick)) {
                throw IIOError(uri: uri, device: name, what: "cannot set in_accel_scale to \(pick)", code: code)
            }
        }
        guard let scale = a.scale, scale > 0 else {
            throw IIOError(uri: uri, device: name, message: "no usable in_accel_scale")
        }

        // Rate: ask for the minimum; if the driver rounds below it, take the smallest listed rate above.
        if a.frequency != nil {
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
        info = a.info(uri: uri)
        if configuration.requireBuffered, info.mode != .buffered {
            throw IIOError(uri: uri, device: name, message: "has no buffer, and buffered mode is required (sensor.mode: buffered)")
        }
        if !configuration.preferBuffered { info.mode = .polled }
        if let m = configuration.mountMatrix { info.mountMatrix = m }
        countsToG = scale / standardGravity
        matrix = (info.mountMatrix ?? [[1, 0, 0], [0, 1, 0], [0, 0, 1]]).flatMap { $0 }
    }

    /// The rate the driver runs at (Hz).
    public var rate: Double { info.samplingFrequency ?? configuration.minimumRate }

    /// Streams samples into `ring` until `stop` becomes true (returns nil) or the device
    /// fails (returns the error). Allocates nothing per sample, takes no lock, never waits
    /// for the consumer: a full ring counts an overrun. `pushed` is called after each batch
    /// (one refill, or one polled sample) so a consumer can sleep until there is data.
    public func capture(into ring: SPSCRingBuffer<AccelerationSample>, stop: ManagedAtomic<Bool>,
                        pushed: () -> Void = {}) -> IIOError? {
        info.mode == .buffered ? captureBuffered(ring, stop, pushed) : capturePolled(ring, stop, pushed)
    }

    /// Wakes a blocked buffered capture (from any thread).
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

    private func error(_ what: String, _ code: Int32) -> IIOError {
        IIOError(uri: configuration.uri, device: info.name, what: what, code: code)
    }

    // MARK: polled mode: the three _raw attributes on a drift-free monotonic schedule

    private func capturePolled(_ ring: SPSCRingBuffer<AccelerationSample>, _ stop: ManagedAtomic<Bool>,
                               _ pushed: () -> Void) -> IIOError? {
        let periodNs = Int64((1e9 / rate).rounded())
        var next = monotonicNanoseconds()
        var cx: Int64 = 0, cy: Int64 = 0, cz: Int64 = 0
        while !stop.load(ordering: .relaxed) {
            var r = iio_channel_attr_read_longlong(attributes.x, "raw", &cx)
            if r == 0 { r = iio_channel_attr_read_longlong(attributes.y, "raw", &cy) }
            if r == 0 { r = iio_channel_attr_read_longlong(attributes.z, "raw", &cz) }
            if r < 0 { return error("reading in_accel_*_raw failed", -r) }
            ring.push(sample(time: Double(monotonicNanoseconds()) * 1e-9, cx, cy, cz))
            pushed()
            next += periodNs
            let now = monotonicNanoseconds()
            if next < now - 10 * periodNs { next = now }   // fell far behind (suspend): don't burst
            sleepUntil(nanoseconds: next)
        }
        return nil
    }

    // MARK: buffered mode: the driver's buffer, blocking refill on this thread

    private func captureBuffered(_ ring: SPSCRingBuffer<AccelerationSample>, _ stop: ManagedAtomic<Bool>,
                                 _ pushed: () -> Void) -> IIOError? {
        let dev = attributes.device
        for i in 0..<iio_device_get_channels_count(dev) {
            if let c = iio_device_get_channel(dev, i) { iio_channel_disable(c) }
        }
        let channels = [attributes.x, attributes.y, attributes.z]
        channels.forEach { iio_channel_enable($0) }
        let ts = attributes.timestamp
        if let ts {
            iio_channel_enable(ts)
            // Kernel timestamps on the same clock as ours.
            if iio_device_find_attr(dev, "current_timestamp_clock") != nil {
                _ = iio_device_attr_write(dev, "current_timestamp_clock", "monotonic")
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
        // One refill per half detector period keeps latency low: the refill waits for a full buffer.
        let count = max(1, Int(rate / (2 * detectorRate)))
        errno = 0
        guard let buf = iio_device_create_buffer(dev, count, false) else {
            return error("cannot create a buffer of \(count) samples", errno == 0 ? EIO : errno)
        }
        buffer.store(Int(bitPattern: UnsafeMutableRawPointer(buf)), ordering: .releasing)
        defer {
            buffer.store(0, ordering: .releasing)
            iio_buffer_destroy(buf)
        }
        let formats = channels.map { iio_channel_get_data_format($0)!.pointee }
        let periodNs = 1e9 / rate
        var raw: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while !stop.load(ordering: .relaxed) {
            let n = iio_buffer_refill(buf)
            if stop.load(ordering: .relaxed) { return nil }
            if n < 0 { return error("buffer refill failed", Int32(-n)) }
            let arrival = Double(monotonicNanoseconds())
            let step = iio_buffer_step(buf)
            guard let end = iio_buffer_end(buf), step > 0 else { continue }
            var px = iio_buffer_first(buf, attributes.x)!, py = iio_buffer_first(buf, attributes.y)!
            var pz = iio_buffer_first(buf, attributes.z)!
            var pt = ts.map { iio_buffer_first(buf, $0)! }
            let samples = (end - px) / step
            var k = 0
            while px < end {
                iio_channel_convert(attributes.x, &raw.0, px)
                iio_channel_convert(attributes.y, &raw.1, py)
                iio_channel_convert(attributes.z, &raw.2, pz)
                let time: Double
                if let p = pt {
                    iio_channel_convert(ts!, &raw.3, p)
                    time = Double(Int64(bitPattern: raw.3)) * 1e-9
                    pt = p + step
                } else {
                    time = (arrival - Double(samples - 1 - k) * periodNs) * 1e-9
                }
                ring.push(sample(time: time, signExtend(raw.0, formats[0]), signExtend(raw.1, formats[1]), signExtend(raw.2, formats[2])))
                px += step; py += step; pz += step
                k += 1
            }
            pushed()
        }
        return nil
    }
}

/// The rate the driver settled on after `wrote` was written to `sampling_frequency`. A kernel
/// driver applies a sysfs write before write() returns; a driver emulated in user space
/// (tools/iio-emulator) applies it a moment later, so a readback that still shows exactly the
/// text written is read again, every 20 ms for up to 100 ms, before it is believed.
func settledFrequency(_ a: AccelerometerAttributes, wrote: String) -> Double? {
    for _ in 0..<5 {
        guard let text = a.read("sampling_frequency")?.trimmingCharacters(in: .whitespacesAndNewlines),
              text == wrote else { break }
        sleepUntil(nanoseconds: monotonicNanoseconds() + 20_000_000)
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

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
public func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// Sleeps until an absolute CLOCK_MONOTONIC time (no drift from repeated relative sleeps).
public func sleepUntil(nanoseconds: Int64) {
    var ts = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}
