import CLibGPIOD
import FallGuardCore
import Foundation

/// libgpiod 1.6 (`libgpiod.so.2`), opened once per process.
let libgpiod1 = loadTable("libgpiod.so.2", "libgpiod 1.x", .v1, fg_gpiod1_load) { String(cString: $0.version_string()!) }

/// The libgpiod 1.6 table; callers hold a backend, so it has loaded.
var gpiod1: fg_gpiod1_api { (try! libgpiod1.get()).table.pointee }

/// The libgpiod 1.6 adapter (uAPI v1).
public struct LibGPIOD1: GPIOBackend {
    /// Opens `libgpiod.so.2`; throws when it is missing or not the 1.x API.
    public static func load() throws(GPIOError) -> LibGPIOD1 {
        _ = try libgpiod1.get()
        return LibGPIOD1()
    }

    /// Use ``load()`` to learn at once whether the library is there; with this, ``openChip(_:)``
    /// throws instead.
    public init() {}

    public var library: GPIOLibraryInfo? { try? libgpiod1.get().info }

    public func openChip(_ chip: String) throws(GPIOError) -> any GPIOChip {
        _ = try libgpiod1.get()
        // gpiod_chip_open_lookup tries the string as a path, a name, a label and a number.
        guard let handle = gpiod1.chip_open_lookup(chip) else {
            let why = errno == ENOENT ? "no such chip" : String(cString: strerror(errno))
            throw GPIOError("chip \"\(chip)\" not found (tried as name, label, /dev path and number: \(why))")
        }
        return LibGPIOD1Chip(handle)
    }
}

final class LibGPIOD1Chip: GPIOChip, @unchecked Sendable {
    // @unchecked: the chip handle is only read after init; lines hold the chip alive.
    let handle: OpaquePointer
    let name: String
    let label: String
    let lineCount: UInt32

    init(_ handle: OpaquePointer) {
        self.handle = handle
        name = String(cString: gpiod1.chip_name(handle)!)
        label = String(cString: gpiod1.chip_label(handle)!)
        lineCount = gpiod1.chip_num_lines(handle)
    }

    deinit { gpiod1.chip_close(handle) }

    var description: String { "\(name) (\(label))" }

    /// The line by offset (all digits) or by name.
    func line(_ spec: String) throws(GPIOError) -> OpaquePointer {
        if let offset = UInt32(spec) {
            guard offset < lineCount, let l = gpiod1.chip_get_line(handle, offset) else {
                throw GPIOError("line \(spec) not found on chip \(description), which has \(lineCount) lines (0...\(Int(lineCount) - 1))")
            }
            return l
        }
        guard let l = gpiod1.chip_find_line(handle, spec) else {
            throw GPIOError("line \"\(spec)\" not found on chip \(description)")
        }
        return l
    }

    func describe(_ line: OpaquePointer) -> String {
        let offset = gpiod1.line_offset(line)
        let name = gpiod1.line_name(line).map { " (\(String(cString: $0)))" } ?? ""
        return "line \(offset)\(name) on chip \(description)"
    }

    /// Why a request failed, naming the line and, when busy, who holds it.
    func requestError(_ line: OpaquePointer, as what: String, _ err: Int32) -> GPIOError {
        if err == EBUSY {
            _ = gpiod1.line_update(line)
            let holder = gpiod1.line_consumer(line).map { "used by \"\(String(cString: $0))\"" } ?? "used by another consumer"
            return GPIOError("\(describe(line)) is busy: \(holder)")
        }
        return GPIOError("cannot request \(describe(line)) as \(what): \(String(cString: strerror(err)))")
    }

    func requestOutput(line spec: String, consumer: String, activeLow: Bool, initiallyActive: Bool) throws(GPIOError) -> any GPIOOutputLine {
        let l = try line(spec)
        let flags: Int32 = activeLow ? FG_GPIOD1_FLAG_ACTIVE_LOW : 0
        guard gpiod1.line_request_output_flags(l, consumer, flags, initiallyActive ? 1 : 0) == 0 else {
            throw requestError(l, as: "output", errno)
        }
        return LibGPIOD1Output(chip: self, line: l, description: describe(l))
    }

    func requestEdges(line spec: String, consumer: String, bias: LineBias, activeLow: Bool) throws(GPIOError) -> any GPIOEdgeLine {
        let l = try line(spec)
        var flags: Int32 = activeLow ? FG_GPIOD1_FLAG_ACTIVE_LOW : 0
        switch bias {
        case .pullUp: flags |= FG_GPIOD1_FLAG_BIAS_PULL_UP
        case .pullDown: flags |= FG_GPIOD1_FLAG_BIAS_PULL_DOWN
        case .disable: flags |= FG_GPIOD1_FLAG_BIAS_DISABLE
        case .asIs: break
        }
        guard gpiod1.line_request_both_edges_events_flags(l, consumer, flags) == 0 else {
            throw requestError(l, as: "input with edge events", errno)
        }
        return LibGPIOD1EdgeLine(chip: self, line: l, description: describe(l))
    }
}

final class LibGPIOD1Output: GPIOOutputLine, @unchecked Sendable {
    // @unchecked: one thread drives the line at a time (the pattern player's).
    let chip: LibGPIOD1Chip
    let line: OpaquePointer
    let description: String

    init(chip: LibGPIOD1Chip, line: OpaquePointer, description: String) {
        (self.chip, self.line, self.description) = (chip, line, description)
    }

    deinit { gpiod1.line_release(line) }

    func set(_ active: Bool) throws(GPIOError) {
        guard gpiod1.line_set_value(line, active ? 1 : 0) == 0 else {
            throw GPIOError("cannot set \(description): \(String(cString: strerror(errno)))")
        }
    }
}

final class LibGPIOD1EdgeLine: GPIOEdgeLine, @unchecked Sendable {
    // @unchecked: one thread (the button's) reads the line.
    let chip: LibGPIOD1Chip
    let line: OpaquePointer
    let description: String
    let fileDescriptor: Int32

    init(chip: LibGPIOD1Chip, line: OpaquePointer, description: String) {
        self.chip = chip
        self.line = line
        self.description = description
        fileDescriptor = gpiod1.line_event_get_fd(line)
    }

    deinit { gpiod1.line_release(line) }

    func read() throws(GPIOError) -> Bool {
        let v = gpiod1.line_get_value(line)
        guard v >= 0 else { throw GPIOError("cannot read \(description): \(String(cString: strerror(errno)))") }
        return v == 1
    }

    func readEdges() throws(GPIOError) -> [GPIOEdge] {
        var events = [fg_gpiod1_line_event](repeating: fg_gpiod1_line_event(), count: 16)
        let n = events.withUnsafeMutableBufferPointer { gpiod1.line_event_read_multiple(line, $0.baseAddress, 16) }
        guard n >= 0 else { throw GPIOError("cannot read events of \(description): \(String(cString: strerror(errno)))") }
        return events.prefix(Int(n)).map { e in
            GPIOEdge(active: e.event_type == FG_GPIOD1_EVENT_RISING_EDGE,
                     timestampNanoseconds: Int64(e.ts.tv_sec) * 1_000_000_000 + Int64(e.ts.tv_nsec))
        }
    }
}
