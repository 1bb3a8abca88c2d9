import FallGuardCore
import Testing

@Suite struct SensorHealthTests {
    /// Issue 14: a reading beyond any accelerometer's range is a sensor fault at once, not a
    /// number for the detector (1e17 g reached the feature formatter).
    @Test(arguments: [1e17, -64.5, .nan, .infinity])
    func aReadingBeyondThePhysicalRangeIsImplausible(value: Double) {
        var health = SensorHealthMonitor(limits: .init(fullScaleG: 16))
        #expect(health.observe(AccelerationSample(time: 1, x: 0, y: 0, z: 1), now: 1).isEmpty)
        let changes = health.observe(AccelerationSample(time: 1.025, x: value, y: 0, z: 1), now: 1.025)
        #expect(changes.map(\.problem) == [.implausible])
        #expect(health.active.contains(.implausible))
    }
}
