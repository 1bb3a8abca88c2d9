import FallGuardCore

/// Real recordings compiled into the binary, so the demo needs no files.
public enum BundledRecordings {
    /// Parses a bundled recording (they are checked by the tests, so this cannot fail).
    public static func parse(_ text: String) -> Recording {
        var text = text
        return text.withUTF8 { bytes in
            do {
                return try RecordingParser.parse(UnsafeRawBufferPointer(bytes))
            } catch {
                preconditionFailure("bundled recording is malformed: \(error)")
            }
        }
    }
}
