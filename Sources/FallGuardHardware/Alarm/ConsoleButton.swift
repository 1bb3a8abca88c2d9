import FallGuardCore
import Foundation

/// The abort button on the keyboard, for the no-hardware demo. Keys (no Enter needed; the
/// terminal is put in non-canonical mode and restored on ``stop()``):
///
/// - **Enter**: a short press (abort the countdown, or "I'm OK" after the alert).
/// - **space**: the button itself: held while the key's autorepeat continues, released
///   0.7 s after the last repeat, so holding space for the long-press time
///   is a help request and a tap is a short press.
/// - **h**: a long press (held for the long-press time and 0.1 s more): the help request.
///
/// When standard input is not a terminal (CI, a service) there is no button: ``isAvailable``
/// is false and ``start(_:)`` does nothing.
public final class ConsoleButton: ButtonSource, @unchecked Sendable {
    // @unchecked: state is touched only by the key thread after start.
    public let isAvailable: Bool
    private let longPress: Int64
    private let releaseAfter: Int64 = 700_000_000
    private var saved = termios()
    private let poller = PollingThread()
    private var isStarted = false
    private var releaseAt: Int64?
    private var pressedAt: Int64?

    public init(longPress: Double) {
        isAvailable = isatty(0) == 1
        self.longPress = Int64(longPress * 1e9)
    }

    /// One line for the status display.
    public static let help = "Enter: short press · hold space or h: long press (help)"

    public func start(_ handler: @escaping @Sendable (ButtonEvent) -> Void) {
        guard isAvailable, !isStarted else { return }
        tcgetattr(0, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)  // keep ISIG: Ctrl-C still stops
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSANOW, &raw)
        isStarted = true
        poller.start(name: "fallguard-keys", realTime: false) { [self] in loop(handler) }
    }

    public func stop() {
        guard poller.stop() else { return }
        tcsetattr(0, TCSANOW, &saved)
    }

    private func loop(_ handler: @Sendable (ButtonEvent) -> Void) {
        var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: poller.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            let timeout = releaseAt.map { Int32(clamping: max(0, ($0 - MonotonicClock.nanoseconds()) / 1_000_000 + 1)) } ?? -1
            let n = poll(&fds, 2, timeout)
            if n < 0, errno == EINTR { continue }
            if fds[1].revents != 0 { return }
            let now = MonotonicClock.nanoseconds()
            if fds[0].revents != 0 {
                var key: UInt8 = 0
                guard read(0, &key, 1) == 1 else { return }  // end of input: no more button
                keyPressed(key, at: now, handler)
            }
            if let r = releaseAt, r <= MonotonicClock.nanoseconds(), let p = pressedAt {
                handler(.released(at: r, duration: r - p, long: r - p >= longPress))
                releaseAt = nil
                pressedAt = nil
            }
        }
    }

    private func keyPressed(_ key: UInt8, at now: Int64, _ handler: @Sendable (ButtonEvent) -> Void) {
        switch key {
        case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            guard pressedAt == nil else { return }
            handler(.pressed(at: now))
            handler(.released(at: now, duration: 0, long: false))
        case UInt8(ascii: " "):
            if pressedAt == nil {
                pressedAt = now
                handler(.pressed(at: now))
            }
            releaseAt = now + releaseAfter
        case UInt8(ascii: "h"), UInt8(ascii: "H"):
            guard pressedAt == nil else { return }
            pressedAt = now
            handler(.pressed(at: now))
            releaseAt = now + longPress + 100_000_000
        default:
            break
        }
    }
}
