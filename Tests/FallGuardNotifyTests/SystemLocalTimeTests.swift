import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

import FallGuardCore
@testable import FallGuardNotify
import FallGuardTestSupport

/// The bridge's own zone comes from the C library, not ICU. Each check runs under a zone set
/// through `TZ` and is compared with Foundation's answer for the same named zone, across the
/// year's clock changes.
@Suite(.serialized) struct SystemLocalTimeTests {
    /// Runs `body` with the process's `TZ` set to `zone`, then restores it.
    func withTZ(_ zone: String, _ body: () throws -> Void) rethrows {
        let saved = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        try body()
    }

    // Instants around the 2026 European changes (29 Mar, 25 Oct) and the US ones (8 Mar, 1 Nov).
    let instants: [Date] = [
        1_767_225_600, 1_772_900_000, 1_774_744_200, 1_774_747_800, 1_774_751_400, 1_782_000_000,
        1_792_889_000, 1_792_893_600, 1_792_897_200, 1_795_000_000, 1_798_761_599,
    ].map { Date(timeIntervalSince1970: $0) }

    @Test(arguments: ["Europe/London", "America/New_York", "Asia/Kolkata", "UTC"])
    func messagesShowTheSameLocalTimeAsFoundation(zone: String) throws {
        let named = try #require(TimeZone(identifier: zone))
        let viaICU = MessageRenderer(templates: MessageTemplates(), wearer: Wearer(name: "M"), device: "b", timeZone: named)
        let viaC = MessageRenderer(templates: MessageTemplates(), wearer: Wearer(name: "M"), device: "b")
        withTZ(zone) {
            for d in instants {
                #expect(viaC.localTime(d) == viaICU.localTime(d), "\(zone) at \(d)")
                #expect(viaC.isoTime(d) == viaICU.isoTime(d), "\(zone) at \(d)")
            }
        }
    }

    @Test(arguments: ["Europe/London", "America/New_York", "Asia/Kolkata"])
    func theHeartbeatFollowsTheLocalClockAcrossChanges(zone: String) throws {
        let named = try #require(TimeZone(identifier: zone))
        let policy = NotificationPolicy(heartbeatAt: "09:30")
        try withTZ(zone) {
            for d in instants {
                let c = try #require(policy.nextHeartbeat(after: d))
                let f = try #require(policy.nextHeartbeat(after: d, timeZone: named))
                #expect(c == f, "\(zone) after \(d)")
                #expect(c > d && c.timeIntervalSince(d) <= 25 * 3600)
            }
        }
    }

    @Test func theStatusTimeCarriesTheLocalOffset() {
        withTZ("America/St_Johns") {   // -03:30 in November
            #expect(SystemLocalTime.iso8601(Date(timeIntervalSince1970: 1_795_000_000)) == "2026-11-18T07:36:40-0330")
        }
        withTZ("UTC") {
            #expect(SystemLocalTime.iso8601(Date(timeIntervalSince1970: 1_795_000_000)) == "2026-11-18T11:06:40Z")
        }
    }
}
