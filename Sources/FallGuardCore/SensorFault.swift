/// A problem with the accelerometer, as the alert engine is told about it.
///
/// While a fault lasts the detector cannot see falls, so the wearer and, after a grace period,
/// the helpers must be told (see ``AlertEngine``). The problem is the sensor-health monitor's
/// ``SensorProblem``; the device names the part a person has to check.
public struct SensorFault: Sendable, Equatable, Codable, CustomStringConvertible {
    public var problem: SensorProblem
    /// Which device, as a person would find it, e.g. `iio:device0 (adxl345)`.
    public var device: String
    /// Anything more the sensor side knows, e.g. the errno text; may be empty.
    public var detail: String

    public init(_ problem: SensorProblem, device: String, detail: String = "") {
        (self.problem, self.device, self.detail) = (problem, device, detail)
    }

    /// `iio:device0 (adxl345): io-error (EIO)`.
    public var description: String {
        "\(device): \(problem.rawValue)\(detail.isEmpty ? "" : " (\(detail))")"
    }
}
