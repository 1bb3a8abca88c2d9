import FallGuardCore
@testable import FallGuardHardware
import FallGuardTestSupport
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
        #expect(IIOAttributeText.frequency("100\n") == 100)
        #expect(IIOAttributeText.frequency("12.5 Hz") == 12.5)
        for bad in ["0", "-40", "nan", "inf", "-inf", "1e308", "", "fast"] {
            #expect(IIOAttributeText.frequency(bad) == nil, "\(bad)")
        }
    }

    /// fuzz/corpus/iio-attributes, the seeds (hardware-notes.md's values) and what fuzzing found
    /// (bench/fuzz.sh): every parser gives a value, nil or an errno for each file.
    @Test func everyFuzzCorpusFileReadsAsAttributeText() throws {
        var raw: [String: (Int32, Int64)] = [:]
        for (name, bytes) in fuzzCorpus("iio-attributes") {
            let text = String(decoding: bytes, as: UTF8.self)
            _ = (IIOAttributeText.scale(text), IIOAttributeText.frequency(text), IIOAttributeText.numbers(text))
            #expect(IIOAttributeText.mountMatrix(text).map { $0.count == 3 && $0.allSatisfy { $0.count == 3 } } ?? true, "\(name)")
            var v: Int64 = 0
            let code = bytes.prefix(24).withUnsafeBytes { IIOAttributeText.raw($0, &v) }
            #expect([0, EINVAL, ENODEV].contains(code), "\(name)")
            raw[name] = (code, v)
        }
        func seed(_ name: String) -> String { String(decoding: fuzzCorpus("iio-attributes").first { $0.name == name }?.bytes ?? [], as: UTF8.self) }
        // libiio hands the text attributes over without sysfs's newline; `_raw` is read as is.
        #expect(IIOAttributeText.scale(seed("scale")) == 0.0383)
        #expect(IIOAttributeText.frequency(seed("sampling_frequency")) == 100)
        #expect(IIOAttributeText.numbers(seed("scale_available")) == [0.000598, 0.001196, 0.002392, 0.004785])
        #expect(IIOAttributeText.numbers(seed("sampling_frequency_available")) == [10, 20, 50, 100, 200, 500])
        #expect(IIOAttributeText.mountMatrix(seed("mount_matrix")) == [[0, 1, 0], [-1, 0, 0], [0, 0, 1]])
        #expect(raw["raw"]?.0 == 0 && raw["raw"]?.1 == -256)
        #expect(raw["crash-raw-20-digits"]?.0 == EINVAL, "20 digits overflowed Int64 (a trap) before they were counted")
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
        #expect(abs(realtime - offset - MonotonicClock.nanoseconds()) < 5_000_000)
        #expect(abs(clockOffsetNanoseconds(CLOCK_MONOTONIC)) < 1_000_000)
    }
}
