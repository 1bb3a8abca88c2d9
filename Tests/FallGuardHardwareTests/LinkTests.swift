import CLibGPIOD
import CLibIIO
import Testing
import FallGuardTestSupport

/// The Debian libraries are installed, found through pkg-config and linked.
@Suite struct LinkTests {
    @Test func libiioIsLinked() {
        var major: UInt32 = 0, minor: UInt32 = 0
        var tag = [CChar](repeating: 0, count: 8)
        iio_library_get_version(&major, &minor, &tag)
        #expect(major == 0 && minor >= 24)
    }

    @Test func libgpiodIsLinked() {
        let v = String(cString: gpiod_version_string())
        #expect(v.hasPrefix("1."))
    }
}
