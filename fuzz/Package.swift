// swift-tools-version:6.0
// libFuzzer targets for FallGuard's parsers of untrusted text (issue 14 §5). A package of its own
// so that neither `swift build` nor `swift test` of FallGuard builds them: bench/fuzz.sh builds
// them with `--sanitize=fuzzer --sanitize=address` into fuzz/.build.
import Foundation
import PackageDescription

// A path dependency is known by its folder's name (`main` in CI, a worktree's name elsewhere).
let fallguard = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

// libFuzzer brings main(): the targets are compiled as a library would be.
func fuzzTarget(_ name: String, _ module: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: module, package: fallguard)],
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    )
}

let package = Package(
    name: "FallGuardFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        fuzzTarget("FuzzConfig", "FallGuardConfig"),
        fuzzTarget("FuzzRecording", "FallGuardCore"),
        fuzzTarget("FuzzAcknowledgement", "FallGuardMQTT"),
        fuzzTarget("FuzzIIOAttributes", "FallGuardHardware"),
    ]
)
