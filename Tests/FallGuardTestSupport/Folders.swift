import Foundation

/// The repository's root folder, from this file's place in Tests/FallGuardTestSupport.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

/// The small SisFall fixtures the tests share (Tests/FallGuardFieldTestTests/Fixtures).
public let fixtureFolder = repositoryRoot + "/Tests/FallGuardFieldTestTests/Fixtures/sisfall"
/// Continuous daily living (UCI HAPT, CC BY 4.0) with activity labels: see its README.
public let dailyFixtureFolder = repositoryRoot + "/Tests/FallGuardFieldTestTests/Fixtures/daily"

/// A new, empty folder under the temporary directory: `fallguard-<name>-<UUID>`.
public func temporaryFolder(_ name: String = "test") -> String {
    let path = NSTemporaryDirectory() + "fallguard-\(name)-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A private folder for one test's files, removed when the value goes away.
public final class TempDirectory {
    public let path: String

    public init(_ name: String = "test") { path = temporaryFolder(name) }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `name` with `mode`; returns the full path.
    @discardableResult
    public func write(_ name: String, _ text: String, mode: Int = 0o644) -> String {
        let file = path + "/" + name
        FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
        chmod(file, mode_t(mode))
        return file
    }
}

/// SisFall F01_SA02_R01 from 6 s before its impact (rows 241 on), written to `<dir>/fall.csv`:
/// a real fall detected a few seconds into a replay.
public func shortFallRecording(in dir: String) throws -> String {
    let rows = try String(contentsOfFile: fixtureFolder + "/F01_SA02_R01.csv", encoding: .utf8).split(separator: "\n")
    let path = dir + "/fall.csv"
    try ([rows[0]] + rows.dropFirst(241)).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// A configuration's `policy:` (YAML at the top level) that sends every alert to `channel` alone,
/// as a broadcast: a file with one channel and no contact that check-config passes.
public func policyBroadcastingTo(_ channel: String) -> String {
    "policy:\n" + ["fall", "help-requested", "resolved", "device-problem", "heartbeat"]
        .map { "  \($0): {primary: [], others: [], broadcast: [\(channel)]}\n" }.joined()
}
