import Foundation

/// A thread that blocks in `poll()` on its descriptors plus a wake-up pipe, so ``stop()`` can
/// end it promptly (the button and key threads).
final class PollingThread: @unchecked Sendable {
    // @unchecked: `started` is only touched by the owner's start/stop; the pipe is fixed.
    private var fds: [Int32] = [-1, -1]
    private var started = false
    private let done = DispatchSemaphore(value: 0)

    init() { _ = pipe(&fds) }
    deinit { close(fds[0]); close(fds[1]) }

    /// Poll this for POLLIN beside your own descriptors; readable means "return now".
    var wakeDescriptor: Int32 { fds[0] }

    /// Starts `body` on a named thread (once).
    func start(name: String, realTime: Bool, _ body: @escaping @Sendable () -> Void) {
        guard !started else { return }
        started = true
        _ = startThread(name: name, realTime: realTime) { [done] in
            body()
            done.signal()
        }
    }

    /// Wakes the thread and waits for `body` to return; false when it never started.
    @discardableResult
    func stop() -> Bool {
        guard started else { return false }
        started = false
        var b: UInt8 = 1
        _ = write(fds[1], &b, 1)
        done.wait()
        return true
    }
}
