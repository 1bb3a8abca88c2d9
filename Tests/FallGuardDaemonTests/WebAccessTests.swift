import FallGuardCore
import FallGuardFieldTest
import FallGuardWeb
import Testing

/// The page's logins, form tokens and Host check, and the live tap, without a server.
@Suite struct WebAccessTests {
    @Test func aRightPasswordStartsASessionThatExpires() {
        let access = WebAccess(password: "correct horse", sessionHours: 1)
        #expect(access.check(password: "correct horse", client: "10.0.0.2", now: 1000) == .right)
        let session = access.startSession(now: 1000)
        #expect(access.allows(session: session, now: 1000 + 3599))
        #expect(!access.allows(session: session, now: 1000 + 3601), "an hour later the session is gone")
        #expect(!access.allows(session: nil, now: 1000))
        #expect(!access.allows(session: "not-a-session", now: 1000))
        let token = access.formToken(session: session, now: 1001)
        #expect(token?.count == 64)
        #expect(access.acceptsForm(token: token, session: session, now: 1002))
        #expect(!access.acceptsForm(token: token, session: nil, now: 1002), "a token without its session")
        #expect(!access.acceptsForm(token: String(token!.dropLast()) + "x", session: session, now: 1002))
        access.logout(session: session)
        #expect(!access.allows(session: session, now: 1003))
        #expect(access.cookie(session: "abc", secure: true) == "fallguard_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600; Secure")
        #expect(WebAccess.session(inCookieHeader: "a=1; fallguard_session=xyz; b=2") == "xyz")
        #expect(WebAccess.session(inCookieHeader: "other=1") == nil)
    }

    /// Issue 28, items 2 and 3: one throttle per client (not one for everybody, which let anyone
    /// keep the owner out), and every place a password is checked goes through it.
    @Test func wrongPasswordsAreThrottledPerClientEvenForTheRightOne() {
        let access = WebAccess(password: "correct horse", sessionHours: 1)
        for i in 0..<WebAccess.throttleLimit {
            #expect(access.check(password: "guess \(i)", client: "192.168.1.66", now: 100 + Double(i)) == .wrong)
        }
        #expect(access.check(password: "correct horse", client: "192.168.1.66", now: 110) == .throttled(seconds: 50, first: true))
        #expect(access.check(password: "correct horse", client: "192.168.1.66", now: 111) == .throttled(seconds: 49, first: false),
                "reported once per wait")
        #expect(access.check(password: "correct horse", client: "192.168.1.5", now: 111) == .right,
                "the owner on another address is not kept out")
        #expect(access.check(password: "correct horse", client: "192.168.1.66", now: 161) == .right,
                "a minute after the first wrong password, the right one works again")
        #expect(WebAccess(password: nil, sessionHours: 1).check(password: "", client: "a", now: 0) == .wrong, "no password, nothing is right")
        #expect(WebAccess.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!WebAccess.constantTimeEqual(Array("abc".utf8), Array("abcd".utf8)))
        #expect(!WebAccess.constantTimeEqual(Array("abd".utf8), Array("abc".utf8)))
    }

    /// Issue 40 item 4: one wrong password from each of 4,100 addresses filled the 4,096-entry
    /// table and the rest shared one bucket, so the owner on a new address got 429. Now the
    /// idlest client makes room, and a client that has not failed is never throttled.
    @Test func aFloodFromManyAddressesNeverThrottlesAClientThatHasNotFailed() {
        let throttle = PasswordThrottle(capacity: 64)
        let access = WebAccess(password: "correct horse", sessionHours: 1, throttle: throttle)
        for i in 0..<200 {   // each address fails once, more addresses than the table holds
            #expect(access.check(password: "guess", client: "10.0.\(i / 256).\(i % 256)", now: 100 + Double(i) * 0.01) == .wrong)
        }
        #expect(throttle.count <= 64, "the table stays within its capacity")
        #expect(access.check(password: "correct horse", client: "192.168.1.5", now: 103) == .right, "the owner is not throttled")
        // A client that keeps failing is still throttled after the flood passed it.
        for i in 0..<WebAccess.throttleLimit { _ = access.check(password: "x\(i)", client: "attacker", now: 104) }
        for i in 0..<60 { _ = access.check(password: "guess", client: "10.9.0.\(i)", now: 104.5) }
        if case .throttled = access.check(password: "correct horse", client: "attacker", now: 105) {} else {
            Issue.record("a client that failed five times within the minute was let through")
        }
    }

    @Test func withoutAPasswordOnlyLoopbackNamesAndTheProcessTokenPass() {
        let access = WebAccess(password: nil, sessionHours: 1)
        #expect(access.allows(session: nil, now: 0))
        for host in ["127.0.0.1:9466", "localhost:9466", "[::1]:9466", "localhost", "127.0.0.2"] {
            #expect(access.acceptsHost(host, loopbackOnly: true), "\(host)")
        }
        for host in ["attacker.example:9466", "192.168.1.5:9466", "localhost.attacker.example", "[::2]:9466"] {
            #expect(!access.acceptsHost(host, loopbackOnly: true), "\(host)")
        }
        #expect(!access.acceptsHost(nil, loopbackOnly: true))
        #expect(access.acceptsHost("attacker.example", loopbackOnly: false), "no loopback promise to keep")
        let token = access.formToken(session: nil, now: 0)
        #expect(access.acceptsForm(token: token, session: nil, now: 0))
        #expect(!access.acceptsForm(token: nil, session: nil, now: 0))
        #expect(WebAccess(password: nil, sessionHours: 1).formToken(session: nil, now: 0) != token, "one per process")
    }

    /// Many throttled clients together must not flood the journal: 30 password lines a minute,
    /// the rest counted in the next one let through.
    @Test func passwordLinesHaveABudgetAMinute() {
        let budget = LineBudget(perMinute: 3)
        #expect((0..<3).map { budget.take(now: 100 + Double($0)) } == [0, 0, 0])
        #expect(budget.take(now: 110) == nil && budget.take(now: 120) == nil, "beyond the budget")
        #expect(budget.take(now: 160) == 2, "the next minute says how many were withheld")
        #expect(budget.take(now: 161) == 0)
    }

    /// Issue 28, item 1: a name that merely begins with `127.` is not loopback (DNS rebinding:
    /// `127.attacker.example` resolving to 127.0.0.1 read the page and its form token).
    @Test func onlyExactLoopbackNamesPassTheHostCheck() {
        let access = WebAccess(password: nil, sessionHours: 1)
        for host in ["127.0.0.1", "127.0.0.1:9466", "127.255.0.7:1", "LOCALHOST:9466", "[::1]", "[::1]:9466"] {
            #expect(access.acceptsHost(host, loopbackOnly: true), "\(host)")
        }
        for host in ["127.attacker.example:9466", "127.attacker.example", "127.0.0.1.attacker.example", "127.0.0.1.nip.io:9466",
                     "127.1", "127.0.0.256", "127.0.0.1.", "localhost.", "localhost.:9466", "localhost:9466x", "localhost:",
                     "[::1]evil", "[::1]:x", "[::1", "::1", "128.0.0.1", "0x7f.0.0.1", "127.0.0.1 ", ""] {
            #expect(!access.acceptsHost(host, loopbackOnly: true), "\(host)")
        }
    }

    @Test func theLiveTapKeepsNothingWhileNobodyLooksAndTheLastMinuteWhileSomeoneDoes() {
        let live = LiveSignal(rate: 10)   // 600 points
        func offer(_ n: Int, from: Int) {
            for i in from..<(from + n) {
                live.offer(AccelerationSample(time: Double(i) * 0.1, x: 0, y: 0, z: 1 + Double(i) * 0.001),
                           monotonicNow: Double(i) * 0.1 + 0.05, wallNow: 1000 + Double(i) * 0.1 + 0.05)
            }
        }
        offer(50, from: 0)
        #expect(live.points(from: 0).points.isEmpty && live.viewers == 0)
        var viewer: LiveSignal.Viewer? = live.viewer()
        #expect(live.viewers == 1)
        offer(700, from: 0)
        let (all, next) = live.points(from: 0)
        #expect(all.count == 600 && next == 700, "the ring holds one minute")
        #expect(all.first?.sequence == 100 && all.last?.sequence == 699)
        #expect(zip(all, all.dropFirst()).allSatisfy { $1.sequence == $0.sequence + 1 }, "oldest first, in order")
        #expect(abs((all.last?.wallMilliseconds ?? 0) - 1_069_900) <= 1, "captured 50 ms before it was offered: \(all.last?.wallMilliseconds ?? 0)")
        #expect(all.last?.milliG == 1699)
        let (some, after) = live.points(from: 695)
        #expect(some.map(\.sequence) == [695, 696, 697, 698, 699] && after == 700)
        #expect(live.points(from: 700).points.isEmpty)
        _ = viewer
        viewer = nil
        #expect(live.viewers == 0)
        #expect(live.points(from: 0).points.isEmpty, "dropped when the last page closed")
    }
}

/// The page's HTML: what came from outside is escaped, ids are safe in paths.
@Suite struct WebPagesTests {
    @Test func textFromOutsideIsEscapedAndTheLabelFormCarriesTheToken() {
        var r = IncidentRecord(id: "FG-7", kind: "fall-suspected", eventTime: 10, eventWallTime: "2026-11-25T10:00:00Z",
                               before: 60, after: 60, detector: .init(name: "multiphase", settings: ["impact": 2], software: "t"),
                               detection: nil)
        r.timeline = [.init(t: 12, time: "2026-11-25T10:00:02Z", event: "acknowledged", detail: "<script>alert(1)</script> by Ben")]
        r.labels = [.init(label: .noFall, by: "<b>x</b>", at: "2026-11-25T10:01:00Z")]
        let samples = (0..<800).map { AccelerationSample(time: Double($0) * 0.025, x: 0, y: 0, z: $0 == 400 ? 4 : 1) }
        let html = WebPages.incident(r, signal: samples, deliveries: [
            WebDelivery(incident: "FG-7", channel: "sms", to: "Ben <ben>", state: "failed", attempts: 3, error: "HTTP 500 <html>", created: nil),
        ], formToken: "tok\"en")
        #expect(!html.contains("<script>") && html.contains("&lt;script&gt;alert(1)&lt;/script&gt; by Ben"))
        #expect(!html.contains("<b>x</b>") && html.contains("&lt;b&gt;x&lt;/b&gt;"))
        #expect(html.contains("Ben &lt;ben&gt;") && html.contains("HTTP 500 &lt;html&gt;"))
        #expect(html.contains("value=\"tok&quot;en\""), "the token is an attribute value, escaped")
        #expect(html.contains("<svg") && html.contains("class=\"threshold\""), "the report's plot with the impact threshold")
        #expect(html.components(separatedBy: "name=\"label\"").count - 1 == 3, "fall, no fall, unsure")
        #expect(WebPages.incident(r, signal: nil, deliveries: [], formToken: nil).contains("No signal kept"))
        #expect(!WebPages.incident(r, signal: nil, deliveries: [], formToken: nil).contains("<form"), "no token, no form")
        #expect(WebPages.urlPathEscaped("FG-1") == "FG-1" && WebPages.urlPathEscaped("a/../b c") == "a%2F..%2Fb%20c")
        #expect(WebPages.urlPathEscaped("é~_x.9") == "%C3%A9%7E_x.9")
    }
}
