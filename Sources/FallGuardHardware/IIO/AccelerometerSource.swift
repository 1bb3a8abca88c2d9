import Atomics
import FallGuardCore
import Foundation

/// What capturing reports besides samples.
public enum AccelerometerEvent: Sendable, Equatable {
    /// The device is open and streaming.
    case opened(AccelerometerInfo)
    /// Opening or reading failed; the source retries after `retryIn` seconds.
    case failed(IIOError, retryIn: Double)
}

/// Runs an ``IIOAccelerometer`` on the consumer's own thread, reopening it with exponential
/// backoff (0.25 s doubling to 2 s) when it fails or disappears, without restarting the process.
///
/// The capture happens inside ``waitForData(timeout:)``: the thread that consumes the samples
/// is the one that blocks in the driver's buffer (or sleeps until the next polled sample), so
/// each delivery wakes one thread once. In buffered mode a delivery is a batch of
/// ``IIOAccelerometer/batchSamples`` (0.4 s: 2.5 wake-ups a second at 40 Hz); polled, one
/// sample. Samples go into ``samples``; open/failure reports into ``events``.
public final class AccelerometerSource: @unchecked Sendable {
    // Sendable: `current`, `retryAt` and `backoff` belong to the thread that calls
    // waitForData; `cancel()` only touches the device under `lock` (libiio's thread-safe
    // iio_buffer_cancel).
    public let configuration: AccelerometerConfiguration
    public let samples: SPSCRingBuffer<AccelerationSample>
    public let events = SPSCRingBuffer<AccelerometerEvent>(minimumCapacity: 64)
    private let stop = ManagedAtomic<Bool>(false)
    private let lock = NSLock()
    private var current: IIOAccelerometer?
    private var retryAt: Int64 = 0
    private var backoff = 0.25

    public init(configuration: AccelerometerConfiguration, capacity: Int = 4096) {
        self.configuration = configuration
        samples = SPSCRingBuffer(minimumCapacity: capacity)
    }

    /// Nothing runs until the first ``waitForData(timeout:)``, which opens the device.
    public func start() {
        stop.store(false, ordering: .releasing)
    }

    /// Opens the device if it is not open (after the backoff), then waits for its next
    /// delivery and pushes it: one buffer refill (up to a batch period plus
    /// ``IIOAccelerometer/stallMargin``, whatever `timeout` says) or one polled sample.
    /// Without a device it sleeps until the next attempt, at most `timeout` seconds.
    public func waitForData(timeout: Double) {
        guard !stop.load(ordering: .acquiring) else { return }
        guard let accel = current else {
            let now = MonotonicClock.nanoseconds()
            if now < retryAt {
                MonotonicClock.sleep(until: min(retryAt, now + Int64(timeout * 1e9)))
                return
            }
            open()
            return
        }
        if let failure = accel.captureStep(into: samples) {
            close()
            if stop.load(ordering: .acquiring) { return }
            fail(failure)
        }
    }

    private func open() {
        do {
            let accel = try IIOAccelerometer(configuration)
            if let failure = accel.startCapture() {
                accel.finishCapture()
                fail(failure)
                return
            }
            lock.withLock { current = accel }
            events.push(.opened(accel.info))
            backoff = 0.25
        } catch {
            fail(error)
        }
    }

    private func fail(_ error: IIOError) {
        events.push(.failed(error, retryIn: backoff))
        retryAt = MonotonicClock.nanoseconds() + Int64(backoff * 1e9)
        backoff = min(2, backoff * 2)
    }

    private func close() {
        let accel = lock.withLock { () -> IIOAccelerometer? in defer { current = nil }; return current }
        accel?.finishCapture()
    }

    /// The samples one wake-up brings (a buffered batch, or 1), and the time between two
    /// wake-ups (s); nil before the device is open.
    public var delivery: (samples: Int, period: Double)? {
        lock.withLock { current.map { ($0.batchSamples, $0.deliveryPeriod) } }
    }

    /// Makes a waitForData blocked in the driver's buffer return now (from any thread); the
    /// capture then stops.
    public func cancel() {
        stop.store(true, ordering: .releasing)
        lock.withLock { current?.cancel() }
    }

    /// Stops capture and releases the device. Call it from the consuming thread, or after it
    /// has returned (``cancel()`` first to make it return at once).
    public func stopAndWait() {
        stop.store(true, ordering: .releasing)
        close()
    }
}
