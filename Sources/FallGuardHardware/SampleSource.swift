import FallGuardCore

/// A producer of timestamped acceleration samples: the IIO device, read on the consumer's
/// thread inside ``waitForData(timeout:)`` (``AccelerometerSource``), or a recording played in
/// real time on a thread of its own (``ReplaySource``). ``SensorPipeline`` consumes either the
/// same way.
public protocol SampleSource: AnyObject, Sendable {
    /// Samples, oldest first (lock-free; the producer never blocks on it).
    var samples: SPSCRingBuffer<AccelerationSample> { get }
    /// Opened / failed reports.
    var events: SPSCRingBuffer<AccelerometerEvent> { get }
    /// Starts the producer.
    func start()
    /// Stops the producer and waits for its thread to end.
    func stopAndWait()
    /// Sleeps until the producer pushed something, or `timeout` seconds pass. The IIO source
    /// captures here: it returns after its next delivery (a buffered batch, 0.4 s of data, or
    /// one polled sample) or, without data, after a batch period plus a stall margin.
    func waitForData(timeout: Double)
    /// Makes a blocked ``waitForData(timeout:)`` return soon, from another thread, before a stop.
    func cancel()
    /// The CPU the producer thread runs on; the consumer pins itself there too.
    var cpu: SensorCPU { get }
}

extension SampleSource {
    public var cpu: SensorCPU { .any }
    public func cancel() {}
}

extension AccelerometerSource: SampleSource {
    public var cpu: SensorCPU { configuration.cpu }
}
