import FallGuardCore

/// A producer of timestamped acceleration samples on its own thread: the IIO capture thread
/// (``AccelerometerSource``) or a recording played in real time (``ReplaySource``).
/// ``SensorPipeline`` consumes either the same way.
public protocol SampleSource: AnyObject, Sendable {
    /// Samples, oldest first (lock-free; the producer never blocks on it).
    var samples: SPSCRingBuffer<AccelerationSample> { get }
    /// Opened / failed reports.
    var events: SPSCRingBuffer<AccelerometerEvent> { get }
    /// Starts the producer thread.
    func start()
    /// Stops the producer and waits for its thread to end.
    func stopAndWait()
    /// Sleeps until the producer pushed something, or `timeout` seconds pass.
    func waitForData(timeout: Double)
    /// The CPU the producer thread runs on; the consumer pins itself there too.
    var cpu: SensorCPU { get }
}

extension SampleSource {
    public var cpu: SensorCPU { .any }
}

extension AccelerometerSource: SampleSource {
    public var cpu: SensorCPU { configuration.cpu }
}
