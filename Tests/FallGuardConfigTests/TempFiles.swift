import Foundation

/// A private directory for one test's files, removed when the value goes away.
final class TempDirectory {
    let path: String

    init() {
        let template = NSTemporaryDirectory() + "fallguard-config-XXXXXX"
        var bytes = Array(template.utf8CString)
        path = bytes.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `name` with `mode`; returns the full path.
    @discardableResult
    func write(_ name: String, _ text: String, mode: Int = 0o644) -> String {
        let file = path + "/" + name
        _ = FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
        chmod(file, mode_t(mode))
        return file
    }
}

/// The repository root, from this file's place in Tests/FallGuardConfigTests.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
