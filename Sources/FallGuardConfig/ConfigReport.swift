import FallGuardConfigKeys
import Foundation

/// The start-up convention for configuration problems: print them all, stop on any error.
public enum ConfigReport {
    /// `EX_CONFIG` from sysexits.h: the configuration is malformed. systemd's
    /// `RestartPreventExitStatus=78` keeps a broken configuration from restarting in a loop.
    public static let exitStatus: Int32 = 78

    /// Writes every diagnostic, one per line, to standard error (or `write`), then a summary
    /// line when there were errors. Returns true when start-up must stop (any error;
    /// warnings alone let it go on).
    @discardableResult
    public static func printAndShouldStop(_ diagnostics: [ConfigDiagnostic],
                                          write: (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) -> Bool {
        for d in diagnostics { write("\(d)\n") }
        let errors = diagnostics.filter(\.isError).count
        guard errors > 0 else { return false }
        write("fallguard: \(errors) configuration error\(errors == 1 ? "" : "s"); not starting (exit status \(exitStatus))\n")
        return true
    }
}
