import CLibIIO
import FallGuardCore

/// What `fallguard devices` shows about one IIO accelerometer (and its gyroscope, when the
/// same IIO device has one: the MPU6050's `anglvel_x/y/z`).
public struct AccelerometerInfo: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable { case buffered, polled }

    public var name: String
    public var id: String
    public var uri: String
    public var mode: Mode
    public var trigger: String?
    /// Hz, as the driver reports it now.
    public var samplingFrequency: Double?
    public var availableFrequencies: [Double]
    /// m/s² per count, and the same in g.
    public var scale: Double
    public var scaleG: Double
    public var availableScales: [Double]
    /// Rows of the chip's mount matrix, when the driver gives one.
    public var mountMatrix: [[Double]]?
    public var hasTimestamp: Bool
    /// The gyroscope read with the accelerometer (in the same scan), nil for an
    /// accelerometer-only sensor (the ADXL345) or when it is not read.
    public var gyroscope: GyroscopeInfo? = nil

    /// `six axes (accelerometer + gyroscope)` or `three axes (accelerometer only)`: which path
    /// runs, as the status, the page, the start-up line and `devices` say it.
    public var axes: String { gyroscope == nil ? "three axes (accelerometer only)" : "six axes (accelerometer + gyroscope)" }
}

/// The gyroscope of a six-axis IIO device: IIO gives rad/s after `raw * scale`; samples carry °/s.
public struct GyroscopeInfo: Codable, Sendable, Equatable {
    /// rad/s per count (`in_anglvel_scale`), and the same in °/s.
    public var scale: Double
    public var scaleDPS: Double
    /// `in_anglvel_scale_available` (rad/s per count).
    public var availableScales: [Double]
    /// The full scale, ±°/s (int16 counts × ``scaleDPS``); nil where there are no counts (a replay).
    public var rangeDPS: Double?
    /// Rows of the gyroscope's own mount matrix (`in_anglvel_mount_matrix`), when the driver gives one.
    public var mountMatrix: [[Double]]?

    public init(scale: Double, availableScales: [Double] = [], rangeDPS: Double?, mountMatrix: [[Double]]? = nil) {
        self.scale = scale
        scaleDPS = scale * degreesPerRadian
        self.availableScales = availableScales
        self.rangeDPS = rangeDPS
        self.mountMatrix = mountMatrix
    }
}

/// IIO reports angular velocity in rad/s; recordings and detectors use °/s.
public let degreesPerRadian = 180 / Double.pi

/// Where a six-axis device's gyroscope attributes live (`in_anglvel_scale`, shared by type).
struct GyroscopeAttributes {
    let x: OpaquePointer, y: OpaquePointer, z: OpaquePointer

    init?(device: OpaquePointer) {
        guard let x = device.iioChannel("anglvel_x"), let y = device.iioChannel("anglvel_y"),
              let z = device.iioChannel("anglvel_z") else { return nil }
        (self.x, self.y, self.z) = (x, y, z)
    }

    var buffered: Bool { iio_channel_is_scan_element(x) && iio_channel_is_scan_element(y) && iio_channel_is_scan_element(z) }
    var scale: Double? { x.iioChannelAttribute("scale").flatMap(IIOAttributeText.scale) }
    var availableScales: [Double] { IIOAttributeText.numbers(x.iioChannelAttribute("scale_available") ?? "") }
    var mountMatrix: [[Double]]? { x.iioChannelAttribute("mount_matrix").flatMap(IIOAttributeText.mountMatrix) }

    /// Writes `in_anglvel_scale`; the errno on failure.
    func writeScale(_ value: String) -> Int32? {
        let r = iio_channel_attr_write(x, "scale", value)
        return r < 0 ? Int32(-r) : nil
    }

    func info() -> GyroscopeInfo? {
        guard let s = scale, s > 0, s.isFinite else { return nil }
        return GyroscopeInfo(scale: s, availableScales: availableScales, rangeDPS: s * Double(Int16.max) * degreesPerRadian,
                             mountMatrix: mountMatrix)
    }
}

/// Where an accelerometer's attributes live: drivers put them on the channel
/// (`in_accel_scale`, shared by type) or on the device (`sampling_frequency`).
struct AccelerometerAttributes {
    let device: OpaquePointer
    let x: OpaquePointer, y: OpaquePointer, z: OpaquePointer
    /// The same device's gyroscope (inv_mpu6050), nil without one (adxl345).
    let gyro: GyroscopeAttributes?

    init?(device: OpaquePointer) {
        guard let x = device.iioChannel("accel_x"), let y = device.iioChannel("accel_y"),
              let z = device.iioChannel("accel_z") else { return nil }
        self.device = device
        self.x = x
        self.y = y
        self.z = z
        gyro = GyroscopeAttributes(device: device)
    }

    /// The channel attribute if the driver has it, else the device attribute.
    func read(_ name: String) -> String? { x.iioChannelAttribute(name) ?? device.iioDeviceAttribute(name) }

    /// Writes where the attribute lives; returns the errno on failure.
    func write(_ name: String, _ value: String) -> Int32? {
        let r: Int
        if iio_channel_find_attr(x, name) != nil {
            r = iio_channel_attr_write(x, name, value)
        } else if iio_device_find_attr(device, name) != nil {
            r = iio_device_attr_write(device, name, value)
        } else {
            return ENOENT
        }
        return r < 0 ? Int32(-r) : nil
    }

    var buffered: Bool { iio_channel_is_scan_element(x) && iio_channel_is_scan_element(y) && iio_channel_is_scan_element(z) }
    var timestamp: OpaquePointer? {
        guard let t = device.iioChannel("timestamp"), iio_channel_is_scan_element(t) else { return nil }
        return t
    }
    var scale: Double? { read("scale").flatMap(IIOAttributeText.scale) }
    /// `sampling_frequency` in Hz, nil when absent or not a rate a sensor runs at
    /// (``Resampler/rates``: a remote iiod may send 0, -1, nan or inf).
    var frequency: Double? { read("sampling_frequency").flatMap(IIOAttributeText.frequency) }
    var availableFrequencies: [Double] {
        IIOAttributeText.numbers(read("sampling_frequency_available") ?? "").filter { Resampler.rates.contains($0) }
    }
    var availableScales: [Double] { IIOAttributeText.numbers(read("scale_available") ?? "") }
    var mountMatrix: [[Double]]? { read("mount_matrix").flatMap(IIOAttributeText.mountMatrix) }

    /// `sampling_frequency`, or an error naming the device and the attribute when the driver
    /// (or a remote iiod) reports something that is not a sensor's rate.
    func checkedFrequency(uri: String, device name: String) throws(IIOError) -> Double? {
        guard let text = read("sampling_frequency") else { return nil }
        guard let rate = IIOAttributeText.frequency(text) else {
            throw IIOError(uri: uri, device: name, message: "sampling_frequency '\(text.prefix(40))' is not a rate in "
                           + "\(Resampler.rates.lowerBound)...\(Resampler.rates.upperBound) Hz")
        }
        return rate
    }

    func info(uri: String) -> AccelerometerInfo {
        var trigger: OpaquePointer?
        let hasTrigger = iio_device_get_trigger(device, &trigger) == 0 && trigger != nil
        let s = scale ?? 0
        return AccelerometerInfo(
            name: device.iioDeviceName ?? device.iioDeviceID, id: device.iioDeviceID, uri: uri,
            mode: buffered ? .buffered : .polled,
            trigger: hasTrigger ? trigger!.iioDeviceName : nil,
            samplingFrequency: frequency, availableFrequencies: availableFrequencies,
            scale: s, scaleG: s / 9.80665, availableScales: availableScales,
            mountMatrix: mountMatrix, hasTimestamp: timestamp != nil,
            // A gyroscope that cannot join a buffered accelerometer's scan is left out.
            gyroscope: gyro.flatMap { g in !buffered || g.buffered ? g.info() : nil })
    }
}

public enum AccelerometerDiscovery {
    /// Every device in the context that has accel_x, accel_y and accel_z channels.
    public static func list(uri: String) throws(IIOError) -> [AccelerometerInfo] {
        let context = try IIOContext(uri: uri)
        return context.devices.compactMap { AccelerometerAttributes(device: $0)?.info(uri: uri) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
