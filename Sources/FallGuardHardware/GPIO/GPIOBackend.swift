import FallGuardCore

/// A GPIO failure; the description names the chip and the line, e.g.
/// `gpio: line "GPIO27" not found on chip gpiochip0 (pinctrl-bcm2711)`.
public struct GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "gpio: " + message }
}

/// One edge from the kernel: the logical level after it (active-low already applied, so
/// `true` is "pressed" for a button) and the kernel's CLOCK_MONOTONIC timestamp.
public struct GPIOEdge: Sendable, Equatable {
    public var active: Bool
    public var timestampNanoseconds: Int64
    public init(active: Bool, timestampNanoseconds: Int64) {
        (self.active, self.timestampNanoseconds) = (active, timestampNanoseconds)
    }
}

/// The library behind the GPIO lines. ``LibGPIOD1`` speaks libgpiod 1.6 (Debian 12, Raspberry
/// Pi OS bookworm), ``LibGPIOD2`` libgpiod 2.x (Debian 13, trixie); ``GPIOLibrary/load(_:)``
/// picks one at run time.
public protocol GPIOBackend: Sendable {
    /// The library and its version (start-up log, `fallguard gpio`, `fallguard status`);
    /// nil for test doubles.
    var library: GPIOLibraryInfo? { get }
    /// Opens a chip by name (`gpiochip0`), label (`pinctrl-bcm2711`), path (`/dev/gpiochip0`)
    /// or number (`0`).
    func openChip(_ chip: String) throws(GPIOError) -> any GPIOChip
}

/// An open GPIO chip. Lines are given by line name (`GPIO17`) or offset (`17`); a missing or
/// busy line throws naming both. Lines keep their chip open; each is released when its
/// object is released (or the process exits).
public protocol GPIOChip: AnyObject, Sendable {
    /// `gpiochip0 (pinctrl-bcm2711)`
    var description: String { get }
    func requestOutput(line: String, consumer: String, activeLow: Bool, initiallyActive: Bool) throws(GPIOError) -> any GPIOOutputLine
    func requestEdges(line: String, consumer: String, bias: LineBias, activeLow: Bool) throws(GPIOError) -> any GPIOEdgeLine
    /// The same with a debounce the kernel applies where the API has one (uAPI v2); otherwise
    /// (the default) the line is requested without, and the caller debounces in software.
    func requestEdges(line: String, consumer: String, bias: LineBias, activeLow: Bool,
                      debounceMicroseconds: UInt32) throws(GPIOError) -> any GPIOEdgeLine
}

extension GPIOBackend {
    public var library: GPIOLibraryInfo? { nil }
}

extension GPIOChip {
    public func requestEdges(line: String, consumer: String, bias: LineBias, activeLow: Bool,
                             debounceMicroseconds: UInt32) throws(GPIOError) -> any GPIOEdgeLine {
        try requestEdges(line: line, consumer: consumer, bias: bias, activeLow: activeLow)
    }
}

/// A requested output line (buzzer, LED). Used from one thread at a time.
public protocol GPIOOutputLine: AnyObject, Sendable {
    /// `line 18 (GPIO18) on chip gpiochip0 (pinctrl-bcm2711)`
    var description: String { get }
    /// Sets the logical level (`true` = active).
    func set(_ active: Bool) throws(GPIOError)
}

/// A requested input line with both-edge events (the button). Used from one thread.
public protocol GPIOEdgeLine: AnyObject, Sendable {
    var description: String { get }
    /// Readable (`poll` POLLIN) when edges are waiting.
    var fileDescriptor: Int32 { get }
    /// The logical level now.
    func read() throws(GPIOError) -> Bool
    /// The edges waiting (call when ``fileDescriptor`` is readable).
    func readEdges() throws(GPIOError) -> [GPIOEdge]
    /// The debounce period the kernel applies to this line's edges (0: none, the caller
    /// debounces). A debounced edge comes that long after the level settled, stamped then.
    var kernelDebounceMicroseconds: UInt32 { get }
}

extension GPIOEdgeLine {
    public var kernelDebounceMicroseconds: UInt32 { 0 }
}
