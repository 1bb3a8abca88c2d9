import FallGuardCore
import Foundation

/// Where button presses come from: the GPIO push button or a key on the console.
public protocol ButtonSource: AnyObject, Sendable {
    /// Starts delivering debounced events (on the source's own thread) until ``stop()``.
    func start(_ handler: @escaping @Sendable (ButtonEvent) -> Void)
    /// Stops and waits for the thread to end; the line or terminal is released.
    func stop()
}

/// The abort button on a GPIO line with both-edge events: edges with their kernel timestamps
/// go through ``ButtonDebouncer``, on a dedicated thread that polls the event descriptor and
/// a wake-up pipe. When the kernel debounces the line (libgpiod 2.x, uAPI v2), its edges come
/// the debounce period after the level settled and are stamped then: the debouncer only
/// classifies presses, on a clock running that period behind (an edge counts from its stamp
/// less the period), so a press is timed at the edge that began it, as with the software
/// debounce, and a release just before the long-press time is seen before that time passes.
public final class AbortButton: ButtonSource, @unchecked Sendable {
    // @unchecked: `line` and `debouncer` are touched only by the button thread after start.
    private var line: (any GPIOEdgeLine)?
    private var debouncer: ButtonDebouncer
    private let kernelDebounce: Int64
    private let poller = PollingThread()
    private var isStarted = false
    /// Called when reading the line fails (the thread ends). Set before ``start(_:)``.
    public var onError: (@Sendable (GPIOError) -> Void)?
    /// Called with every raw edge (for diagnostics and tests). Set before ``start(_:)``.
    public var onRawEdge: (@Sendable (GPIOEdge) -> Void)?

    /// Takes the requested line; `timings` gives debounce and long-press times.
    public init(line: any GPIOEdgeLine, timings: ButtonTimings) throws(GPIOError) {
        self.line = line
        let pressedNow = try line.read()
        kernelDebounce = Int64(line.kernelDebounceMicroseconds) * 1000
        let software = timings.debouncer(initiallyPressed: pressedNow, at: MonotonicClock.nanoseconds())
        debouncer = kernelDebounce == 0 ? software
            : ButtonDebouncer(debounce: 0, longPress: software.longPress, initiallyPressed: pressedNow,
                              at: MonotonicClock.nanoseconds() - kernelDebounce)
    }

    public func start(_ handler: @escaping @Sendable (ButtonEvent) -> Void) {
        guard !isStarted else { return }
        isStarted = true
        poller.start(name: "fallguard-button", realTime: true) { [self] in loop(handler) }
    }

    public func stop() {
        guard poller.stop() else { return }
        line = nil  // releases the line
    }

    private func loop(_ handler: @Sendable (ButtonEvent) -> Void) {
        guard let line else { return }
        var fds = [pollfd(fd: line.fileDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: poller.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        // The debouncer's clock: the kernel's debounce period behind (0 without).
        func now() -> Int64 { MonotonicClock.nanoseconds() - kernelDebounce }
        while true {
            var timeout: Int32 = -1
            if let d = debouncer.nextDeadline {
                timeout = Int32(clamping: max(0, (d - now() + 999_999) / 1_000_000))
            }
            let n = poll(&fds, 2, timeout)
            if n < 0, errno == EINTR { continue }
            if fds[1].revents != 0 { return }
            var events: [ButtonEvent] = []
            if fds[0].revents != 0 {
                do {
                    for e in try line.readEdges() {
                        onRawEdge?(e)
                        events += debouncer.edge(pressed: e.active, at: e.timestampNanoseconds - kernelDebounce)
                    }
                } catch {
                    onError?(error)
                    return
                }
            }
            events += debouncer.advance(to: now())
            events.forEach(handler)
        }
    }
}
