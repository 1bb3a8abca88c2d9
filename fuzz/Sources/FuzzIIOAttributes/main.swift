import FallGuardHardware

/// Any bytes as the text of an accelerometer's sysfs attributes: every parser returns a value
/// or nil / an errno, and never traps. `_raw` gets at most the 24 bytes the capture reads.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIIOAttributes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = IIOAttributeText.scale(text)
    _ = IIOAttributeText.frequency(text)
    _ = IIOAttributeText.numbers(text)
    if let m = IIOAttributeText.mountMatrix(text) { precondition(m.count == 3 && m.allSatisfy { $0.count == 3 }) }
    var value: Int64 = 0
    let code = IIOAttributeText.raw(UnsafeRawBufferPointer(rebasing: bytes.prefix(24)), &value)
    precondition(code == 0 || (size == 0) == (code == ENODEV))
    return 0
}

#if canImport(Glibc)
import Glibc
#endif
