import CLibIIO
import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

/// The Debian libraries are installed, found through pkg-config and linked; libgpiod is not
/// linked but opened at run time (either API).
@Suite struct LinkTests {
    @Test func libiioIsLinked() {
        var major: UInt32 = 0, minor: UInt32 = 0
        var tag = [CChar](repeating: 0, count: 8)
        iio_library_get_version(&major, &minor, &tag)
        #expect(major == 0 && minor >= 24)
    }

    /// libgpiod.so.2 (1.6) opens through dlopen and reports its version.
    @Test func libgpiod1IsOpenedAtRunTime() throws {
        try GPIOLib.v1.require()
        let info = try #require(try LibGPIOD1.load().library)
        #expect(info.api == .v1 && info.soname == "libgpiod.so.2" && info.version.hasPrefix("1."), "\(info)")
        #expect(info.description == "libgpiod \(info.version) (libgpiod.so.2, uAPI v1)")
    }

    /// The fallguard program needs neither libgpiod at load time: one build, either library.
    @Test func fallguardDoesNotLinkLibgpiod() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/objdump")
        p.arguments = ["-p", Emulator.fallguard]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let needed = text.split(separator: "\n").filter { $0.contains("NEEDED") }
        #expect(!needed.isEmpty, "objdump read the program")
        #expect(!needed.contains { $0.contains("libgpiod") }, "\(needed)")
    }
}
