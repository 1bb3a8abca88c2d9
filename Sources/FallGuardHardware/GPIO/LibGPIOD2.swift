import CLibGPIOD
import FallGuardCore
import Foundation

/// libgpiod 2.x (`libgpiod.so.3`), opened once per process.
let libgpiod2 = loadTable("libgpiod.so.3", "libgpiod 2.x", .v2, fg_gpiod2_load) { String(cString: $0.api_version()!) }

/// The libgpiod 2.x table; callers hold a backend, so it has loaded.
var gpiod2: fg_gpiod2_api { (try! libgpiod2.get()).table.pointee }

/// The libgpiod 2.x adapter (uAPI v2: Debian 13 / Raspberry Pi OS trixie, bookworm-backports).
/// Behaves as ``LibGPIOD1``: the same lookups, messages and edge semantics; in addition the
/// kernel debounces the button when asked (``GPIOChip/requestEdges(line:consumer:bias:activeLow:debounceMicroseconds:)``).
public struct LibGPIOD2: GPIOBackend {
    /// Opens `libgpiod.so.3`; throws when it is missing or not the 2.x API.
    public static func load() throws(GPIOError) -> LibGPIOD2 {
        _ = try libgpiod2.get()
        return LibGPIOD2()
    }

    public init() {}

    public var library: GPIOLibraryInfo? { try? libgpiod2.get().info }

    public func openChip(_ chip: String) throws(GPIOError) -> any GPIOChip {
        _ = try libgpiod2.get()
        // libgpiod 2 opens paths only: a name, label or number is looked up as 1.6's
        // gpiod_chip_open_lookup did (path, name, label, number).
        let api = gpiod2
        if chip.contains("/") {
            if let h = api.chip_open(chip) { return try LibGPIOD2Chip(h, path: chip) }
            throw notFound(chip, errno)
        }
        if let n = UInt32(chip), let h = api.chip_open("/dev/gpiochip\(n)") { return try LibGPIOD2Chip(h, path: "/dev/gpiochip\(n)") }
        if chip.hasPrefix("gpiochip"), let h = api.chip_open("/dev/" + chip) { return try LibGPIOD2Chip(h, path: "/dev/" + chip) }
        for path in Self.chipPaths() where api.is_gpiochip_device(path) {
            guard let h = api.chip_open(path) else { continue }
            guard let info = api.chip_get_info(h) else { api.chip_close(h); continue }
            let label = String(cString: api.chip_info_get_label(info)!)
            api.chip_info_free(info)
            if label == chip { return try LibGPIOD2Chip(h, path: path) }
            api.chip_close(h)
        }
        throw notFound(chip, ENOENT)
    }

    func notFound(_ chip: String, _ err: Int32) -> GPIOError {
        let why = err == ENOENT ? "no such chip" : errnoText(err)
        return GPIOError("chip \"\(chip)\" not found (tried as name, label, /dev path and number: \(why))")
    }

    /// `/dev/gpiochip*` in number order.
    static func chipPaths() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.filter { $0.hasPrefix("gpiochip") }
            .sorted { (Int($0.dropFirst(8)) ?? .max, $0) < (Int($1.dropFirst(8)) ?? .max, $1) }
            .map { "/dev/" + $0 }
    }
}

final class LibGPIOD2Chip: GPIOChip, @unchecked Sendable {
    // @unchecked: the chip handle is only read after init; lines hold the chip alive.
    let handle: OpaquePointer
    let name: String
    let label: String
    let lineCount: UInt32

    init(_ handle: OpaquePointer, path: String) throws(GPIOError) {
        self.handle = handle
        guard let info = gpiod2.chip_get_info(handle) else {
            let e = errno
            gpiod2.chip_close(handle)
            throw GPIOError("cannot read chip information of \(path): \(errnoText(e))")
        }
        defer { gpiod2.chip_info_free(info) }
        name = String(cString: gpiod2.chip_info_get_name(info)!)
        label = String(cString: gpiod2.chip_info_get_label(info)!)
        lineCount = UInt32(gpiod2.chip_info_get_num_lines(info))
    }

    deinit { gpiod2.chip_close(handle) }

    var description: String { "\(name) (\(label))" }

    /// The offset of a line given by offset (all digits) or by name.
    func offset(_ spec: String) throws(GPIOError) -> UInt32 {
        if let offset = UInt32(spec) {
            guard offset < lineCount else {
                throw GPIOError("line \(spec) not found on chip \(description), which has \(lineCount) lines (0...\(Int(lineCount) - 1))")
            }
            return offset
        }
        let o = gpiod2.chip_get_line_offset_from_name(handle, spec)
        guard o >= 0 else { throw GPIOError("line \"\(spec)\" not found on chip \(description)") }
        return UInt32(o)
    }

    /// The line's name and consumer now (nil when the kernel does not answer).
    func info(_ offset: UInt32) -> (name: String?, consumer: String?)? {
        guard let i = gpiod2.chip_get_line_info(handle, offset) else { return nil }
        defer { gpiod2.line_info_free(i) }
        let name = gpiod2.line_info_get_name(i).map { String(cString: $0) }
        let consumer = gpiod2.line_info_is_used(i) ? gpiod2.line_info_get_consumer(i).map { String(cString: $0) } : nil
        return (name, consumer)
    }

    func describe(_ offset: UInt32) -> String {
        let name = info(offset)?.name.map { " (\($0))" } ?? ""
        return "line \(offset)\(name) on chip \(description)"
    }

    /// Why a request failed, naming the line and, when busy, who holds it.
    func requestError(_ offset: UInt32, as what: String, _ err: Int32) -> GPIOError {
        if err == EBUSY {
            let holder = info(offset)?.consumer.map { "used by \"\($0)\"" } ?? "used by another consumer"
            return GPIOError("\(describe(offset)) is busy: \(holder)")
        }
        return GPIOError("cannot request \(describe(offset)) as \(what): \(errnoText(err))")
    }

    /// One line requested with the settings `configure` makes.
    func request(_ offset: UInt32, consumer: String, as what: String,
                 _ configure: (OpaquePointer) -> Void) throws(GPIOError) -> OpaquePointer {
        let api = gpiod2
        guard let settings = api.line_settings_new(), let lineConfig = api.line_config_new(),
              let requestConfig = api.request_config_new() else { throw GPIOError("out of memory") }
        defer {
            api.line_settings_free(settings)
            api.line_config_free(lineConfig)
            api.request_config_free(requestConfig)
        }
        configure(settings)
        var o = offset
        guard api.line_config_add_line_settings(lineConfig, &o, 1, settings) == 0 else {
            throw GPIOError("cannot configure \(describe(offset)): \(errnoText())")
        }
        api.request_config_set_consumer(requestConfig, consumer)
        guard let request = api.chip_request_lines(handle, requestConfig, lineConfig) else {
            throw requestError(offset, as: what, errno)
        }
        return request
    }

    func requestOutput(line spec: String, consumer: String, activeLow: Bool, initiallyActive: Bool) throws(GPIOError) -> any GPIOOutputLine {
        let offset = try offset(spec)
        let request = try request(offset, consumer: consumer, as: "output") { s in
            _ = gpiod2.line_settings_set_direction(s, FG_GPIOD2_DIRECTION_OUTPUT)
            gpiod2.line_settings_set_active_low(s, activeLow)
            _ = gpiod2.line_settings_set_output_value(s, initiallyActive ? FG_GPIOD2_VALUE_ACTIVE : FG_GPIOD2_VALUE_INACTIVE)
        }
        let output = LibGPIOD2Output(chip: self, request: request, offset: offset, description: describe(offset))
        // The first set after a request was measured up to 14 ms slow (libgpiod 2's value path
        // touched for the first time, on a loaded machine): a buzzer pattern's first edge came
        // late. Setting the level the line already has moves that cost here; it changes nothing.
        try output.set(initiallyActive)
        return output
    }

    func requestEdges(line spec: String, consumer: String, bias: LineBias, activeLow: Bool) throws(GPIOError) -> any GPIOEdgeLine {
        try requestEdges(line: spec, consumer: consumer, bias: bias, activeLow: activeLow, debounceMicroseconds: 0)
    }

    func requestEdges(line spec: String, consumer: String, bias: LineBias, activeLow: Bool,
                      debounceMicroseconds: UInt32) throws(GPIOError) -> any GPIOEdgeLine {
        let offset = try offset(spec)
        let request = try request(offset, consumer: consumer, as: "input with edge events") { s in
            _ = gpiod2.line_settings_set_direction(s, FG_GPIOD2_DIRECTION_INPUT)
            _ = gpiod2.line_settings_set_edge_detection(s, FG_GPIOD2_EDGE_BOTH)
            let b: Int32 = switch bias {
            case .pullUp: FG_GPIOD2_BIAS_PULL_UP
            case .pullDown: FG_GPIOD2_BIAS_PULL_DOWN
            case .disable: FG_GPIOD2_BIAS_DISABLED
            case .asIs: FG_GPIOD2_BIAS_AS_IS
            }
            _ = gpiod2.line_settings_set_bias(s, b)
            gpiod2.line_settings_set_active_low(s, activeLow)
            gpiod2.line_settings_set_debounce_period_us(s, UInt(debounceMicroseconds))
        }
        return try LibGPIOD2EdgeLine(chip: self, request: request, offset: offset, description: describe(offset),
                                     debounce: debounceMicroseconds)
    }
}

final class LibGPIOD2Output: GPIOOutputLine, @unchecked Sendable {
    // @unchecked: one thread drives the line at a time (the pattern player's).
    let chip: LibGPIOD2Chip
    let request: OpaquePointer
    let offset: UInt32
    let description: String

    init(chip: LibGPIOD2Chip, request: OpaquePointer, offset: UInt32, description: String) {
        (self.chip, self.request, self.offset, self.description) = (chip, request, offset, description)
    }

    deinit { gpiod2.line_request_release(request) }

    func set(_ active: Bool) throws(GPIOError) {
        guard gpiod2.line_request_set_value(request, offset, active ? FG_GPIOD2_VALUE_ACTIVE : FG_GPIOD2_VALUE_INACTIVE) == 0 else {
            throw GPIOError("cannot set \(description): \(errnoText())")
        }
    }
}

final class LibGPIOD2EdgeLine: GPIOEdgeLine, @unchecked Sendable {
    // @unchecked: one thread (the button's) reads the line.
    let chip: LibGPIOD2Chip
    let request: OpaquePointer
    let offset: UInt32
    let description: String
    let fileDescriptor: Int32
    let kernelDebounceMicroseconds: UInt32
    private let buffer: OpaquePointer

    init(chip: LibGPIOD2Chip, request: OpaquePointer, offset: UInt32, description: String, debounce: UInt32) throws(GPIOError) {
        self.chip = chip
        self.request = request
        self.offset = offset
        self.description = description
        kernelDebounceMicroseconds = debounce
        fileDescriptor = gpiod2.line_request_get_fd(request)
        guard let b = gpiod2.edge_event_buffer_new(16) else {
            gpiod2.line_request_release(request)
            throw GPIOError("out of memory")
        }
        buffer = b
    }

    deinit {
        gpiod2.line_request_release(request)
        gpiod2.edge_event_buffer_free(buffer)
    }

    func read() throws(GPIOError) -> Bool {
        let v = gpiod2.line_request_get_value(request, offset)
        guard v >= 0 else { throw GPIOError("cannot read \(description): \(errnoText())") }
        return v == FG_GPIOD2_VALUE_ACTIVE
    }

    func readEdges() throws(GPIOError) -> [GPIOEdge] {
        let n = gpiod2.line_request_read_edge_events(request, buffer, 16)
        guard n >= 0 else { throw GPIOError("cannot read events of \(description): \(errnoText())") }
        return (0..<Int(n)).compactMap { i in
            guard let e = gpiod2.edge_event_buffer_get_event(buffer, UInt(i)) else { return nil }
            return GPIOEdge(active: gpiod2.edge_event_get_event_type(e) == FG_GPIOD2_EDGE_EVENT_RISING_EDGE,
                            timestampNanoseconds: Int64(gpiod2.edge_event_get_timestamp_ns(e)))
        }
    }
}
