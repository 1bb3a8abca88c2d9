import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// Compressed recordings: what the bridge writes while it monitors (one gzip member per flush).
@Suite struct GzipRecordingTests {
    let text = Recording.timedHeader + "\n# wall-clock 2026-11-24T02:00:00.000Z at t_s 100.000\n"
        + (0..<400).map { Recording.row(AccelerationSample(time: 100 + Double($0) / 40, x: 0.01, y: -0.98, z: 0.2)) + "\n" }.joined()

    func members(_ parts: [String]) -> [UInt8] {
        parts.flatMap { p in Array(p.utf8).withUnsafeBytes { Gzip.member($0) } }
    }

    @Test func readsAFileOfSeveralMembersAsOneRecording() throws {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let half = lines.count / 2
        let first = lines[..<half].joined(separator: "\n") + "\n"
        let second = lines[half...].joined(separator: "\n")
        let folder = TempDirectory()
        let path = folder.path + "/2026-11-24T02.csv.gz"
        try Data(members([first, second])).write(to: URL(fileURLWithPath: path))
        let recording = try RecordingFile.read(path: path)
        #expect(recording.samples.count == 400)
        #expect(recording.hasTimes)
        #expect(recording.samples.first?.time == 100)
        #expect(recording.samples.last.map { abs($0.time - 109.975) < 1e-9 } == true)
        // gzip(1) reads the same file as one stream: what `zcat` shows is the recording.
        let zcat = try runCommand("/bin/gzip", ["-dc", path])
        #expect(zcat.status == 0)
        #expect(zcat.stdout == text)
    }

    @Test func aMemberCutShortLosesOnlyItsPartialLine() throws {
        var bytes = members([String(text.prefix(2000))])
        let complete = bytes.count
        bytes += members([String(text.dropFirst(2000))])
        bytes.removeLast((bytes.count - complete) / 2)  // a kill in the middle of the second flush
        let inflated = try bytes.withUnsafeBytes { try Gzip.inflate($0) }
        #expect(inflated.truncated)
        #expect(inflated.bytes.last == 0x0A)
        let got = String(decoding: inflated.bytes, as: UTF8.self)
        #expect(text.hasPrefix(got))
        #expect(got.count >= 2000 - 40)  // at least the first member's whole lines
        let folder = TempDirectory()
        let path = folder.path + "/cut.csv.gz"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try RecordingFile.read(path: path).samples.count > 40)
    }

    @Test func damagedOrForeignBytesAreNamedErrors() throws {
        var bytes = members([text])
        bytes[bytes.count / 2] ^= 0xFF
        bytes[bytes.count / 2 + 1] ^= 0xFF
        let folder = TempDirectory()
        let path = folder.path + "/damaged.csv.gz"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: RecordingFileError.self) { try RecordingFile.read(path: path) }
        #expect(error?.path == path)
        #expect(error?.reason.hasPrefix("damaged gzip data at byte ") == true)
        let trailing = members([text]) + Array("garbage".utf8)
        #expect(throws: GzipError.self) { try trailing.withUnsafeBytes { try Gzip.inflate($0) } }
    }

    /// Damaged files from a failing SD card: every cut and every flipped byte of a recording
    /// is an error or whole lines, never a crash or a partial line.
    @Test func everyCutAndEveryFlippedByteIsAnErrorOrWholeLines() throws {
        let bytes = members([String(text.prefix(3000)), String(text.dropFirst(3000))])
        var seed: UInt64 = 7
        func next() -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(seed >> 33) }
        for round in 0..<600 {
            var damaged = Array(bytes.prefix(round < 300 ? next() % (bytes.count + 1) : bytes.count))
            if round >= 300, !damaged.isEmpty { damaged[next() % damaged.count] ^= UInt8(1 + next() % 255) }
            let result = damaged.withUnsafeBytes { raw in Result { () throws(GzipError) in try Gzip.inflate(raw) } }
            switch result {
            case .success(let (inflated, _)):
                #expect(inflated.isEmpty || inflated.last == 0x0A, "round \(round): a partial line")
                #expect(text.utf8.starts(with: inflated) || round >= 300, "round \(round): a cut gives a prefix")
            case .failure(let error):
                #expect(!error.reason.isEmpty)
            }
        }
    }
}
