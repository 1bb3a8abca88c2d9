import Foundation

/// A pipe that wakes a thread blocked in `poll()` (the button and key threads) for shutdown.
final class WakePipe: @unchecked Sendable {
    // @unchecked: the descriptors are fixed after init.
    private var fds: [Int32] = [-1, -1]

    init() { _ = pipe(&fds) }
    deinit { close(fds[0]); close(fds[1]) }

    /// The end to poll for POLLIN.
    var readEnd: Int32 { fds[0] }

    func wake() {
        var b: UInt8 = 1
        _ = write(fds[1], &b, 1)
    }
}
