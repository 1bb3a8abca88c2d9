import FallGuardCore

/// Real recordings compiled into the binary (SwiftPM's `embedInCode` resources), so the demo
/// needs no files.
public enum BundledRecordings {
    /// A real forward slip while walking, 15 s at 40 Hz: `Resources/demo-fall.csv`, a copy of
    /// the development dataset's `SA01/F01_SA01_R01.csv`. Data: SisFall (A. Sucerquia,
    /// J. D. López, J. F. Vargas-Bonilla, "SisFall: A Fall and Movement Dataset", Sensors 17(1):198,
    /// 2017), resampled to 40 Hz.
    public static var demoFall: [UInt8] { PackageResources.demo_fall_csv }

    public static let demoFallName = "SisFall F01_SA01_R01, forward slip while walking"

    /// Parses a bundled recording (they are checked by the tests, so this cannot fail).
    public static func parse(_ bytes: [UInt8]) -> Recording {
        bytes.withUnsafeBytes { raw in
            do {
                return try RecordingParser.parse(raw)
            } catch {
                preconditionFailure("bundled recording is malformed: \(error)")
            }
        }
    }
}
