import FallGuardCore
import FallGuardHardware
import Foundation
import Synchronization

/// A GPIO chip in memory, for in-process tests of the alarm and the daemon: outputs record
/// every level they are set to with its CLOCK_MONOTONIC time; a test presses and releases
/// input lines, which deliver edges through a real pipe descriptor as the kernel's line
/// request does. Lines are found by name (`GPIO17`) or offset (`17`); a line requested twice
/// is busy, as on a real chip.
public final class InMemoryGPIO: GPIOBackend, Sendable {
    public struct Level: Sendable, Equatable {
        public var active: Bool
        public var nanoseconds: Int64
    }

    private struct State {
        var levels: [String: [Level]] = [:]
        var inputs: [String: InMemoryEdgeLine] = [:]
        var held: Set<String> = []
    }

    private let state = Mutex(State())
    public let name: String

    public init(name: String = "gpiochip0") { self.name = name }

    public func openChip(_ chip: String) throws(GPIOError) -> any GPIOChip {
        guard chip == name || chip == "/dev/" + name else { throw GPIOError("chip \(chip) not found (in-memory chip \(name))") }
        return InMemoryChip(gpio: self)
    }

    /// Every level the output `line` was set to, oldest first.
    public func levels(of line: String) -> [Level] { state.withLock { $0.levels[Self.key(line)] ?? [] } }

    /// Presses (`true`) or releases the button on input `line` now.
    public func set(input line: String, active: Bool) {
        let input = state.withLock { $0.inputs[Self.key(line)] }
        input?.edge(GPIOEdge(active: active, timestampNanoseconds: MonotonicClock.nanoseconds()))
    }

    fileprivate func request(_ line: String) throws(GPIOError) -> String {
        let key = Self.key(line)
        let taken: Bool = state.withLock { s in
            if s.held.contains(key) { return false }
            s.held.insert(key)
            return true
        }
        guard taken else { throw GPIOError("line \(line) on chip \(name) is busy") }
        return key
    }

    fileprivate func record(_ key: String, _ active: Bool) {
        state.withLock { $0.levels[key, default: []].append(Level(active: active, nanoseconds: MonotonicClock.nanoseconds())) }
    }

    fileprivate func register(_ key: String, _ input: InMemoryEdgeLine) { state.withLock { $0.inputs[key] = input } }

    /// `GPIO17` and `17` name the same line.
    static func key(_ line: String) -> String { line.hasPrefix("GPIO") ? String(line.dropFirst(4)) : line }
}

private final class InMemoryChip: GPIOChip {
    let gpio: InMemoryGPIO
    init(gpio: InMemoryGPIO) { self.gpio = gpio }
    var description: String { "\(gpio.name) (in memory)" }

    func requestOutput(line: String, consumer: String, activeLow: Bool, initiallyActive: Bool) throws(GPIOError) -> any GPIOOutputLine {
        let key = try gpio.request(line)
        gpio.record(key, initiallyActive)
        return InMemoryOutputLine(gpio: gpio, key: key)
    }

    func requestEdges(line: String, consumer: String, bias: LineBias, activeLow: Bool) throws(GPIOError) -> any GPIOEdgeLine {
        let key = try gpio.request(line)
        let input = InMemoryEdgeLine(key: key)
        gpio.register(key, input)
        return input
    }
}

private final class InMemoryOutputLine: GPIOOutputLine {
    let gpio: InMemoryGPIO
    let key: String
    init(gpio: InMemoryGPIO, key: String) { (self.gpio, self.key) = (gpio, key) }
    var description: String { "line \(key) (in memory)" }
    func set(_ active: Bool) throws(GPIOError) { gpio.record(key, active) }
}

private final class InMemoryEdgeLine: GPIOEdgeLine {
    let key: String
    private let pipe: (read: Int32, write: Int32)
    private let pending = Mutex<(edges: [GPIOEdge], level: Bool)>(([], false))

    init(key: String) {
        self.key = key
        var fds: [Int32] = [-1, -1]
        _ = Glibc.pipe(&fds)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        pipe = (fds[0], fds[1])
    }

    deinit {
        close(pipe.read)
        close(pipe.write)
    }

    var description: String { "line \(key) (in memory)" }
    var fileDescriptor: Int32 { pipe.read }

    func read() throws(GPIOError) -> Bool { pending.withLock { $0.level } }

    func readEdges() throws(GPIOError) -> [GPIOEdge] {
        var byte: UInt8 = 0
        while Glibc.read(pipe.read, &byte, 1) == 1 {}
        return pending.withLock { p in defer { p.edges.removeAll() }; return p.edges }
    }

    func edge(_ e: GPIOEdge) {
        pending.withLock { p in
            p.edges.append(e)
            p.level = e.active
        }
        var byte: UInt8 = 1
        _ = Glibc.write(pipe.write, &byte, 1)
    }
}
