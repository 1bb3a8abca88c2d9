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

    /// The HTTP `Date` header (RFC 9110's IMF-fixdate) agrees with Foundation's own formatting
    /// (what Hummingbird's date cache wrote) over the same instants, weekdays included.
    @Test func httpDatesAgreeWithFoundation() throws {
        var rng = SystemRandomNumberGenerator()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(secondsFromGMT: 0))
        var instants = [0, -1, 784_111_777, 951_782_400, 4_107_542_400, -2_208_988_800]
        for _ in 0..<2000 { instants.append(Int.random(in: -2_208_988_800...5_680_000_000, using: &rng)) }
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        for t in instants {
            let c = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: Double(t)))
            let two = { (v: Int?) in String(format: "%02d", v ?? -1) }
            let expected = "\(days[c.weekday! - 1]), \(two(c.day)) \(months[c.month! - 1]) \(String(format: "%04d", c.year!)) "
                + "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
            #expect(httpDate(secondsSince1970: t) == expected, "\(t)")
        }
        #expect(httpDate(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")   // RFC 9110's example
    }

    /// The parser reads back what the writer writes, at every offset, over the same centuries,
    /// and agrees with Foundation's ISO 8601 parser (ICU) on the forms bridges send.
    @Test func parsesWhatItWritesAndWhatFoundationReads() throws {
        var rng = SystemRandomNumberGenerator()
        var instants: [Double] = [0, -1, 951_782_400, 951_868_799, 4_107_542_400, -2_208_988_800]
        for _ in 0..<2000 { instants.append(Double.random(in: -2_208_988_800...5_680_000_000, using: &rng).rounded(.down)) }
        for offset in [0, 3600, -18_000, 19_800, -12_600] {
            for t in instants { #expect(secondsSince1970(iso8601: iso8601(secondsSince1970: t, utcOffset: offset)) == t, "\(t) at \(offset)") }
        }
        let foundation = ISO8601DateFormatter()
        foundation.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for text in ["2026-11-18T11:06:40.250Z", "2024-02-29T23:59:59.5+05:30", "1999-12-31T00:00:00.125-03:30"] {
            let expected = try #require(foundation.date(from: text)).timeIntervalSince1970
            #expect(abs(try #require(secondsSince1970(iso8601: text)) - expected) < 0.001, "\(text)")
        }
        let offset = try #require(secondsSince1970(iso8601: "2026-11-18T11:06:40+01:00"))
        #expect(offset == 1_794_996_400.0, "\(offset)")
        for bad in ["", "2026-11-18", "2026-11-18T11:06:40", "2026-13-18T11:06:40Z", "2026-11-18T25:06:40Z", "2026-11-18T11:06:40Zjunk",
                    "2026-11-18T11:06:40.Z", "２０２６-11-18T11:06:40Z", "9999-99-99T99:99:99Z"] {
            #expect(secondsSince1970(iso8601: bad) == nil, "\(bad)")
        }
    }

    /// Device names in the order people read them, as `localizedStandardCompare` put them,
    /// without ICU.
    @Test func namesInNaturalOrder() {
        let names = ["room-10", "Room-2", "room-1", "room-002", "hall", "room-1a", "room-01", "Annex-3", "room-100", "room-9"]
        let sorted = names.sorted(by: naturalOrder)
        #expect(sorted == ["Annex-3", "hall", "room-01", "room-1", "room-1a", "Room-2", "room-002", "room-9", "room-10", "room-100"], "\(sorted)")
        for a in names { #expect(!naturalOrder(a, a), "\(a) before itself") }
        for a in names { for b in names where a != b { #expect(naturalOrder(a, b) != naturalOrder(b, a), "\(a) / \(b)") } }
    }
}
