import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A free TCP port on 127.0.0.1 (the kernel's choice); with `listening`, a socket that accepts
/// connections into its backlog and never answers (returned so the caller keeps it open),
/// else released at once.
public func loopbackPort(listening: Bool = false) -> (port: Int, fd: Int32) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    if listening { listen(fd, 8) } else { close(fd) }
    return (Int(UInt16(bigEndian: address.sin_port)), listening ? fd : -1)
}

/// A free TCP port on 127.0.0.1, released at once.
public func freeLoopbackPort() -> Int { loopbackPort().port }
