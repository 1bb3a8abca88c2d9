@testable import FallGuardHardware
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The polled capture's kept-open `_raw` files and the timestamp clock conversion.
@Suite struct IIOSysfsTests {
    static func file(_ text: String) -> String {
        let path = NSTemporaryDirectory() + "fg-raw-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    @Test func aKeptFileReadsEachNewValueAsSysfsShowsIt() throws {
        let path = Self.file("-4096\n")
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var v: Int64 = 0
        #expect(readRaw(fd, &v) == 0 && v == -4096)
        let w = open(path, O_WRONLY)
        _ = "12\n".withCString { pwrite(w, $0, 3, 0) }   // in place, the longer tail left behind
        #expect(readRaw(fd, &v) == 0 && v == 12, "the number ends at the newline")
        ftruncate(w, 0)
        #expect(readRaw(fd, &v) == ENODEV, "an emptied (removed) attribute")
        _ = "G#$\n".withCString { pwrite(w, $0, 4, 0) }
        #expect(readRaw(fd, &v) == EINVAL)
        _ = "4095".withCString { pwrite(w, $0, 4, 0) }
        #expect(readRaw(fd, &v) == 0 && v == 4095)
        close(w)
    }

    /// Issue 14: a remote iiod controls the sampling_frequency text; 0, negative, nan or inf
    /// trapped the resampler. Such a rate is no rate (and the accelerometer refuses to open).
    @Test func samplingFrequencyIsARateOrNothing() {
        #expect(AccelerometerAttributes.rate("100\n") == 100)
        #expect(AccelerometerAttributes.rate("12.5 Hz") == 12.5)
        for bad in ["0", "-40", "nan", "inf", "-inf", "1e308", "", "fast"] {
            #expect(AccelerometerAttributes.rate(bad) == nil, "\(bad)")
        }
    }

    @Test func realtimeTimestampsAreBroughtToTheMonotonicClock() throws {
        #expect(clockID("realtime") == CLOCK_REALTIME)
        #expect(clockID("monotonic") == CLOCK_MONOTONIC)
        #expect(clockID("boottime") == CLOCK_BOOTTIME)
        #expect(clockID("sundial") == nil)
        let offset = clockOffsetNanoseconds(CLOCK_REALTIME)
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let realtime = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        #expect(abs(realtime - offset - monotonicNanoseconds()) < 5_000_000)
        #expect(abs(clockOffsetNanoseconds(CLOCK_MONOTONIC)) < 1_000_000)
    }
}
