import Foundation
import Testing

/// Runs commands against the project's IIO emulator (tools/iio-emulator), which builds a fake
/// sysfs tree and /dev/iio:deviceN in a private mount namespace so the real libiio runs.
enum Emulator {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let fixtures = root + "/Tests/FallGuardFieldTestTests/Fixtures/sisfall"

    /// Namespaces, tmpfs and mknod need root; the reason is given where tests skip.
    static let available: Bool = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
    static let skipReason: Comment = "needs root: the IIO emulator mounts a private /sys/bus and /dev in a mount namespace (tools/emu-ns)"

    /// The fallguard binary built beside the test bundle.
    static let fallguard: String = {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("fallguard").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return "fallguard"
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// stdout lines that are JSON objects.
        var events: [[String: Any]] {
            stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    /// `iio-emu EMULATOR_ARGS -- COMMAND...`
    static func run(_ emulatorArguments: [String], _ command: [String]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: root + "/tools/iio-emulator/iio-emu")
        p.arguments = emulatorArguments + ["--"] + command
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read both pipes concurrently so neither fills up.
        nonisolated(unsafe) var errData = Data()
        let reader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !reader.isFinished { usleep(1000) }
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }
}
