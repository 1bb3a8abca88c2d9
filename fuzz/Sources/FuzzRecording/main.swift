import FallGuardCore

/// Any bytes as a recording file: parsed, or a RecordingFormatError with a line; a parsed
/// recording has samples, finite values and (with `t_s`) strictly increasing times.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecording(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    do {
        let recording = try RecordingParser.parse(bytes)
        precondition(!recording.samples.isEmpty)
        for (i, s) in recording.samples.enumerated() {
            precondition(s.time.isFinite && s.x.isFinite && s.y.isFinite && s.z.isFinite)
            precondition(i == 0 || s.time > recording.samples[i - 1].time)
        }
    } catch {
        precondition(error.line >= 1 && !error.reason.isEmpty)
    }
    return 0
}
