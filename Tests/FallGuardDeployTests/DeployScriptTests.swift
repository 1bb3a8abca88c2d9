import FallGuardTestSupport
import Foundation
import Testing

/// The deployment checks in bench/ run as tests too, so CI keeps them passing: the systemd
/// unit (verify, exposure ≤ 2.5), the udev rules (udevadm test), the device-tree overlay (dtc),
/// install.sh twice and the .deb (dpkg-deb), the signed apt repository (release.sh). Each script
/// prints what it checked.
@Suite("Deployment files", .serialized)
struct DeployScriptTests {
    static let root = repositoryRoot
    static let isRoot = getuid() == 0

    /// The `fallguard` program `swift test` built beside the test bundle, if it is there.
    static let fallguardBinary: String? = FileManager.default.isExecutableFile(atPath: FallGuardTestSupport.fallguardBinary)
        ? FallGuardTestSupport.fallguardBinary : nil

    /// Runs a bench script; returns its exit status and output.
    static func run(_ script: String, _ arguments: [String] = []) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: root + "/bench/" + script)
        p.arguments = arguments
        p.currentDirectoryURL = URL(fileURLWithPath: root)
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func systemdUnitVerifiesAndIsExposedAtMost2point5() throws {
        let r = try Self.run("systemd-security.sh")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("verify: PASS"))
        let figure = r.output.split(separator: "\n").first { $0.hasPrefix("security: exposure ") }
            .flatMap { Double($0.split(separator: " ")[2]) }
        let exposure = try #require(figure, "\(r.output)")
        #expect(exposure <= 2.5)
    }

    @Test(.enabled(if: isRoot, "udevadm test runs in a private mount namespace: needs root"))
    func udevRulesGiveFallguardTheDevicesAndAttributes() throws {
        let r = try Self.run("udev-rules-check.sh")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("udev-rules-check: PASS"))
    }

    /// deploy/release.sh: a signed repository checked as apt checks it (bench/apt-repo.sh runs apt itself).
    @Test func releaseMakesASignedRepositoryAndRefusesARepublishedVersion() throws {
        let r = try Self.run("release-check.sh")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("release-check: PASS"))
        #expect(!r.output.contains("FAIL"), "\(r.output)")
    }

    @Test func adxl345OverlayCompilesWithDtc() throws {
        let r = try Self.run("dt-overlay.sh")
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("dt-overlay: PASS"))
    }

    @Test(.enabled(if: isRoot, "install.sh's system steps run over a private copy of /etc: needs root"))
    func installTwiceAndDebianPackage() throws {
        let binary = try #require(Self.fallguardBinary, "no fallguard program beside the test bundle")
        let r = try Self.run("install-check.sh", ["--binary", binary])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("install-check: PASS"))
        #expect(!r.output.contains("skip"))
    }
}
