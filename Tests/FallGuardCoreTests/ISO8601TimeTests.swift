import FallGuardCore
import Foundation
import Testing
import FallGuardTestSupport

@Suite struct ISO8601TimeTests {
    /// The arithmetic agrees with Foundation's formatter (which goes through ICU) on instants
    /// spread over 1900–2150, leap days and century years included, at several offsets.
    @Test func agreesWithFoundationOverTwoAndAHalfCenturies() throws {
        var rng = SystemRandomNumberGenerator()
        var instants: [Double] = [0, -1, 951_782_400, 951_868_799, 4_107_542_400, -2_208_988_800, 1_795_000_000.9]
        for _ in 0..<2000 { instants.append(Double.random(in: -2_208_988_800...5_680_000_000, using: &rng).rounded(.down)) }
        for offset in [0, 3600, -18_000, 19_800, -12_600, 45_900] {
            let zone = try #require(TimeZone(secondsFromGMT: offset))
            let style = Date.ISO8601FormatStyle(timeZone: zone)
            for t in instants {
                let expected = Date(timeIntervalSince1970: t.rounded(.down)).formatted(style)
                #expect(iso8601(secondsSince1970: t, utcOffset: offset) == expected, "\(t) at \(offset)")
            }
        }
    }

    @Test func writesZForUTCAndSignsOffsets() {
        #expect(iso8601(secondsSince1970: 1_795_000_000) == "2026-11-18T11:06:40Z")
        #expect(iso8601(secondsSince1970: 1_795_000_000, utcOffset: -12_600) == "2026-11-18T07:36:40-0330")
        #expect(iso8601(secondsSince1970: 1_795_000_000, utcOffset: 3600) == "2026-11-18T12:06:40+0100")
    }
}
