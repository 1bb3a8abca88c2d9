import CLibIIO
#if canImport(Glibc)
import Glibc
#endif

/// An error from libiio or the kernel, naming the context URI and device it concerns.
public struct IIOError: Error, Equatable, CustomStringConvertible {
    public var uri: String
    public var device: String?
    public var message: String

    public init(uri: String, device: String? = nil, message: String) {
        self.uri = uri
        self.device = device
        self.message = message
    }

    init(uri: String, device: String? = nil, what: String, code: Int32) {
        self.init(uri: uri, device: device, message: "\(what): \(IIOError.describe(code))")
    }

    /// libiio's text for a (positive or negative) errno value.
    static func describe(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        iio_strerror(abs(code), &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var description: String {
        "\(device.map { "IIO device \($0)" } ?? "IIO context") at \(uri): \(message)"
    }
}

/// A libiio context (`local:`, `ip:host`, `usb:…`); the single owner of the C object.
public final class IIOContext: @unchecked Sendable {
    // Sendable: used by one thread at a time (the sensor thread owns it while capturing).
    let pointer: OpaquePointer
    public let uri: String

    public init(uri: String) throws(IIOError) {
        errno = 0
        guard let p = iio_create_context_from_uri(uri) else {
            let code = errno == 0 ? ENODEV : errno
            throw IIOError(uri: uri, what: "cannot open the IIO context", code: code)
        }
        pointer = p
        self.uri = uri
    }

    deinit { iio_context_destroy(pointer) }

    var devices: [OpaquePointer] {
        (0..<iio_context_get_devices_count(pointer)).compactMap { iio_context_get_device(pointer, $0) }
    }
}

// Small helpers over the C API.
extension OpaquePointer {
    var iioDeviceName: String? { iio_device_get_name(self).map { String(cString: $0) } }
    var iioDeviceID: String { String(cString: iio_device_get_id(self)) }

    func iioChannel(_ id: String, output: Bool = false) -> OpaquePointer? { iio_device_find_channel(self, id, output) }

    func iioDeviceAttribute(_ name: String) -> String? {
        guard iio_device_find_attr(self, name) != nil else { return nil }
        return readAttribute { iio_device_attr_read(self, name, $0, $1) }
    }

    func iioChannelAttribute(_ name: String) -> String? {
        guard iio_channel_find_attr(self, name) != nil else { return nil }
        return readAttribute { iio_channel_attr_read(self, name, $0, $1) }
    }

    /// Calls a libiio `*_attr_read` into a buffer; the text without its NUL and white space.
    private func readAttribute(_ read: (UnsafeMutablePointer<CChar>, Int) -> Int) -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBufferPointer { read($0.baseAddress!, $0.count) }
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmed
    }
}

extension String {
    var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\n" || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\n" || l == "\t" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
