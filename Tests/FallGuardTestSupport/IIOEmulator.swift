import Foundation
import Testing

/// Runs commands against the project's IIO emulator (tools/iio-emulator), which builds a fake
/// sysfs tree and /dev/iio:deviceN in a private mount namespace so the real libiio runs.
public enum Emulator {
    public static let root = repositoryRoot
    public static let fixtures = fixtureFolder

    /// Namespaces, tmpfs and mknod need root; the reason is given where tests skip.
    public static let available: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
    public static let skipReason: Comment = "needs root: the IIO emulator mounts a private /sys/bus and /dev in a mount namespace (tools/emu-ns)"

    public static let fallguard = fallguardBinary

    /// `iio-emu EMULATOR_ARGS -- COMMAND...`
    public static func run(_ emulatorArguments: [String], _ command: [String]) throws -> CommandResult {
        try runCommand(root + "/tools/iio-emulator/iio-emu", emulatorArguments + ["--"] + command)
    }
}
