import FallGuardSystemd
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real AF_UNIX datagram socket standing in for systemd's notify socket.
private final class NotifySocket {
    let fd: Int32
    let name: String   // as $NOTIFY_SOCKET says it
    private let path: String?

    init(abstract: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let unique = "fallguard-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var bytes: [UInt8]
        if abstract {
            name = "@" + unique
            path = nil
            bytes = [0] + Array(unique.utf8)
        } else {
            let p = NSTemporaryDirectory() + unique
            name = p
            path = p
            bytes = Array(p.utf8) + [0]
        }
        var sun = sockaddr_un()
        sun.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sun.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let r = withUnsafePointer(to: &sun) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard fd >= 0, r == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)   // a lost datagram fails the test, not hangs it
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    /// The next datagram, or nil after the timeout.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n < 0 ? nil : String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// Whether a datagram is waiting, without waiting for one.
    func hasPending() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT | MSG_PEEK)) >= 0
    }
}

@Suite("systemd notifications")
struct SystemdNotifierTests {
    @Test(arguments: [false, true])
    func everyMessageArrivesAsOneDatagram(abstract: Bool) throws {
        let server = try NotifySocket(abstract: abstract)
        let n = try #require(try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": server.name]))
        #expect(n.socketPath == server.name)
        try n.ready(status: "monitoring adxl345\nat 40 Hz")
        #expect(server.receive() == "READY=1\nSTATUS=monitoring adxl345 at 40 Hz")
        try n.watchdog()
        #expect(server.receive() == "WATCHDOG=1")
        try n.status("countdown 30 s")
        #expect(server.receive() == "STATUS=countdown 30 s")
        try n.reloading()
        #expect(server.receive() == "RELOADING=1")
        try n.stopping()
        #expect(server.receive() == "STOPPING=1")
    }

    @Test func noNotifySocketMeansNoNotifier() throws {
        #expect(try SystemdNotifier.fromEnvironment([:]) == nil)
        #expect(throws: SystemdNotifyError.unsupportedAddress("vsock:2:1234")) {
            try SystemdNotifier(socketPath: "vsock:2:1234")
        }
    }

    @Test func sendingToAMissingSocketIsAnErrorNamingIt() throws {
        let n = try SystemdNotifier(socketPath: "/nonexistent/notify")
        do {
            try n.watchdog()
            Issue.record("sent to a socket that does not exist")
        } catch {
            #expect(error.description.hasPrefix("sendto /nonexistent/notify: "))
        }
    }

    @Test func watchdogIntervalFollowsTheEnvironment() {
        #expect(WatchdogInterval(environment: [:]) == nil)
        #expect(WatchdogInterval(environment: ["WATCHDOG_USEC": "0"]) == nil)
        #expect(WatchdogInterval(environment: ["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "\(getpid() + 1)"]) == nil)
        let w = WatchdogInterval(environment: ["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "\(getpid())"])
        #expect(w?.timeoutMicroseconds == 10_000_000)
        #expect(w?.pingIntervalNanoseconds == 5_000_000_000)
    }

    @Test func pingerSendsAtMostOncePerHalfTimeout() throws {
        let server = try NotifySocket(abstract: true)
        let pinger = try #require(try WatchdogPinger.fromEnvironment(["NOTIFY_SOCKET": server.name, "WATCHDOG_USEC": "2000000"]))
        let second: Int64 = 1_000_000_000
        // 40 Hz sample loop for 3.5 s of (virtual) time: pings at 0, 1, 2 and 3 s.
        var sent: [Int64] = []
        for k in 0..<140 {
            let now = 100 * second + Int64(k) * second / 40
            if try pinger.tick(nowNanoseconds: now) { sent.append(now - 100 * second) }
        }
        #expect(sent == [0, second, 2 * second, 3 * second])
        for _ in sent { #expect(server.receive() == "WATCHDOG=1") }
        #expect(!server.hasPending())
        #expect(try WatchdogPinger.fromEnvironment(["NOTIFY_SOCKET": server.name]) == nil)
    }

    @Test func pingerStopsWhileAWatchedPartIsSilentPastItsAllowance() throws {
        let server = try NotifySocket(abstract: true)
        let liveness = Liveness()
        let pinger = try #require(try WatchdogPinger.fromEnvironment(["NOTIFY_SOCKET": server.name, "WATCHDOG_USEC": "2000000"],
                                                                     liveness: liveness))
        let second: Int64 = 1_000_000_000
        liveness.watch("alarm", allowanceNanoseconds: 4 * second, nowNanoseconds: 0)
        liveness.watch("delivery", allowanceNanoseconds: 4 * second, nowNanoseconds: 0)
        // The sample loop ticks every 25 ms for 10 s; the alarm thread passes every second, the
        // delivery worker stops passing at 2 s and comes back at 8 s.
        var sent: [Int64] = []
        for k in 0..<400 {
            let now = Int64(k) * second / 40
            if now % second == 0 { liveness.pass("alarm", nowNanoseconds: now) }
            if now % second == 0, now <= 2 * second || now >= 8 * second { liveness.pass("delivery", nowNanoseconds: now) }
            if now == 7 * second { #expect(liveness.stalled(nowNanoseconds: now).map(\.part) == ["delivery"]) }
            if try pinger.tick(nowNanoseconds: now) { sent.append(now / second) }
        }
        #expect(sent == [0, 1, 2, 3, 4, 5, 6, 8, 9], "no ping while the worker was silent more than 4 s (6 s to 8 s)")
        for _ in sent { #expect(server.receive() == "WATCHDOG=1") }
    }
}
