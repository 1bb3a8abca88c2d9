import CLibIIO
import FallGuardCore

/// What `fallguard devices` shows about one IIO accelerometer.
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
}

/// Where an accelerometer's attributes live: drivers put them on the channel
/// (`in_accel_scale`, shared by type) or on the device (`sampling_frequency`).
struct AccelerometerAttributes {
    let device: OpaquePointer
    let x: OpaquePointer, y: OpaquePointer, z: OpaquePointer

    init?(device: OpaquePointer) {
        guard let x = device.iioChannel("accel_x"), let y = device.iioChannel("accel_y"),
              let z = device.iioChannel("accel_z") else { return nil }
        self.device = device
        self.x = x
        self.y = y
        self.z = z
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
    var scale: Double? { read("scale").flatMap(Double.init) }
    /// `sampling_frequency` in Hz, nil when absent or not a rate a sensor runs at
    /// (``Resampler/rates``: a remote iiod may send 0, -1, nan or inf).
    var frequency: Double? { read("sampling_frequency").flatMap(Self.rate) }
    var availableFrequencies: [Double] { numbers(read("sampling_frequency_available")).filter { Resampler.rates.contains($0) } }

    /// `sampling_frequency`, or an error naming the device and the attribute when the driver
    /// (or a remote iiod) reports something that is not a sensor's rate.
    func checkedFrequency(uri: String, device name: String) throws(IIOError) -> Double? {
        guard let text = read("sampling_frequency") else { return nil }
        guard let rate = Self.rate(text) else {
            throw IIOError(uri: uri, device: name, message: "sampling_frequency '\(text.prefix(40))' is not a rate in "
                           + "\(Resampler.rates.lowerBound)...\(Resampler.rates.upperBound) Hz")
        }
        return rate
    }

    /// The first word of an attribute as a rate in ``Resampler/rates``.
    static func rate(_ text: String) -> Double? {
        Double(text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first ?? "").flatMap { Resampler.rates.contains($0) ? $0 : nil }
    }
    var availableScales: [Double] { numbers(read("scale_available")) }

    /// `in_accel_mount_matrix`: "x1, y1, z1; x2, y2, z2; x3, y3, z3"; nil when absent or not
    /// three rows of three numbers within ±1 (a rotation's entries: nan or 1e300 would turn
    /// every sample into a fault).
    var mountMatrix: [[Double]]? {
        guard let text = read("mount_matrix") else { return nil }
        let rows = text.split(separator: ";").map { $0.split(separator: ",").compactMap { Double($0.trimmingSpaces) } }
        guard rows.count == 3, rows.allSatisfy({ $0.count == 3 && $0.allSatisfy { abs($0) <= 1 } }) else { return nil }
        return rows
    }

    func numbers(_ text: String?) -> [Double] {
        (text ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
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
            mountMatrix: mountMatrix, hasTimestamp: timestamp != nil)
    }
}

extension Substring {
    var trimmingSpaces: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
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
