import Atomics
import FallGuardCore
import Foundation

/// What the capture thread reports besides samples.
public enum AccelerometerEvent: Sendable, Equatable {
    /// The device is open and streaming.
    case opened(AccelerometerInfo)
    /// Opening or reading failed; the source retries after `retryIn` seconds.
    case failed(IIOError, retryIn: Double)
}

/// Runs an ``IIOAccelerometer`` on a dedicated thread, reopening it with exponential backoff
/// (0.25 s doubling to 2 s) when it fails or disappears, without restarting the process.
///
/// Samples go into ``samples`` (lock-free, never blocks the thread); open/failure reports go
/// into ``events``. The consumer drains both.
public final class AccelerometerSource: @unchecked Sendable {
    // Sendable: the mutable state (`current`) is only touched under `lock`; rings are SPSC.
    public let configuration: AccelerometerConfiguration
    public let samples: SPSCRingBuffer<AccelerationSample>
    public let events = SPSCRingBuffer<AccelerometerEvent>(minimumCapacity: 64)
    private let stop = ManagedAtomic<Bool>(false)
    private let lock = NSLock()
    private var current: IIOAccelerometer?
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// Rung by the capture thread after each batch and event; never blocks it.
    private let doorbell = DispatchSemaphore(value: 0)

    public init(configuration: AccelerometerConfiguration, capacity: Int = 4096) {
        self.configuration = configuration
        samples = SPSCRingBuffer(minimumCapacity: capacity)
    }

    public func start() {
        let t = Thread { [self] in run() }
        t.name = "fallguard-accel"
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    /// Sleeps until the capture thread has pushed samples or an event, or `timeout` seconds
    /// pass. Lets the consumer wake once per batch instead of polling.
    public func waitForData(timeout: Double) {
        _ = doorbell.wait(timeout: .now() + timeout)
    }

    /// Stops capture and waits for the thread to finish.
    public func stopAndWait() {
        stop.store(true, ordering: .releasing)
        lock.withLock { current?.cancel() }
        if thread != nil { finished.wait() }
        thread = nil
    }

    private func run() {
        defer { finished.signal() }
        configuration.cpu.pinCurrentThread()
        var backoff = 0.25
        while !stop.load(ordering: .acquiring) {
            do {
                let accel = try IIOAccelerometer(configuration)
                lock.withLock { current = accel }
                events.push(.opened(accel.info))
                doorbell.signal()
                backoff = 0.25
                let failure = accel.capture(into: samples, stop: stop) { doorbell.signal() }
                lock.withLock { current = nil }
                guard let failure else { return }
                events.push(.failed(failure, retryIn: backoff))
            } catch {
                events.push(.failed(error, retryIn: backoff))
            }
            doorbell.signal()
            // Sleep in small steps so stop is prompt.
            let until = monotonicNanoseconds() + Int64(backoff * 1e9)
            while !stop.load(ordering: .acquiring), monotonicNanoseconds() < until {
                sleepUntil(nanoseconds: min(until, monotonicNanoseconds() + 50_000_000))
            }
            backoff = min(2, backoff * 2)
        }
    }
}
