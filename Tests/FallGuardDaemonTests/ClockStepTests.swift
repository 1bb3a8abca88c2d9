import FallGuardConfig
import FallGuardCore
import FallGuardHardware
@testable import FallGuardNotify
import FallGuardTestSupport
import AsyncHTTPClient
import Foundation
import Synchronization
import Testing

/// Issue 36 item 3: the wall clock the daemon reads stepped +3 days and -1 h (a Pi without a
/// real-time clock, set by NTP) during a countdown, during an outbox retry and across the
/// heartbeat time: every alert exactly once, the countdown within 0.2 s of its length, the
/// retry after its wait, the heartbeat once per local day.
@Suite(.serialized) struct ClockStepTests {
    /// CLOCK_REALTIME plus an offset the test steps.
    final class SteppedWall: Sendable {
        let offset = Mutex(0.0)
        var read: @Sendable () -> Double { { SteadyWallClock.systemWall() + self.offset.withLock { $0 } } }
        func step(_ s: Double) { offset.withLock { $0 += s } }
    }

    static let threeDays = 3 * 86_400.0

    /// An outbox on a steady clock over `wall`, its one channel a webhook on `receiver`, fall
    /// alerts broadcast to it, retries after exactly `retry` s; the health check's follow of the
    /// wall clock every 0.2 s while `body` runs.
    /// `steady: false`: the outbox reads the wall clock itself, as it did before issue 36.
    static func withOutbox<T>(_ receiver: Receiver, _ wall: SteppedWall, retry: Double, steady: Bool = true,
                              _ body: (Outbox) async throws -> T) async throws -> T {
        var policy = NotificationPolicy(retry: RetrySettings(initial: retry, max: retry, jitter: 0))
        let route = AlertRoute(primary: [], broadcast: ["hook"])
        (policy.fall, policy.helpRequested, policy.resolved, policy.deviceProblem) = (route, route, route, route)
        let settings = NotificationSettings(device: "clock", wearer: Wearer(name: "Margaret"), contacts: [],
                                            channels: ["hook": WebhookOptions(url: receiver.base + "/hook")], policy: policy)
        let path = temporaryFolder() + "/outbox.sqlite"
        let box = steady ? Outbox(path: path, settings: settings, clock: SteadyWallClock(wall: wall.read), folderCheck: { nil })
                         : Outbox(path: path, settings: settings, now: wall.read, folderCheck: { nil })
        #expect(box.retryOpen() == nil && box.unavailable == nil)
        let follow = Task {
            while !Task.isCancelled {
                _ = try? box.followWallClock()
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { follow.cancel() }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let worker = DeliveryWorker(outbox: box, channels: try box.settings.makeChannels(context: ChannelContext(httpClient: client, write: { _ in })))
        let task = Task { await worker.run() }
        let result: Result<T, any Error>
        do { result = .success(try await body(box)) } catch { result = .failure(error) }
        task.cancel()
        await task.value
        try? await client.shutdown()
        return try result.get()
    }

    /// The retry waits its 3 s though the clock went +3 days and then -1 h inside the wait:
    /// without following the steps it went out at once (+3 days) or an hour late (-1 h).
    @Test func aRetryKeepsItsWaitAcrossStepsOfThreeDaysForwardAndAnHourBack() async throws {
        let receiver = try Receiver(["--fail-first", "1", "--fail-path-prefix", "/hook"])
        let wall = SteppedWall()
        try await Self.withOutbox(receiver, wall, retry: 3) { box in
            try box.deliver(Alert(kind: .fall, incident: "FG-1", time: 0))
            #expect(await until(10) { receiver.requests.count == 1 }, "the first attempt, refused")
            let failedAt = MonotonicClock.seconds()
            try await Task.sleep(for: .seconds(0.8))
            wall.step(Self.threeDays)
            try await Task.sleep(for: .seconds(0.8))
            wall.step(-3600)
            #expect(receiver.requests.count == 1, "not sent at once after the step forward")
            #expect(await until(8) { receiver.requests.count == 2 }, "the retry after its wait, not an hour late")
            let waited = MonotonicClock.seconds() - failedAt
            #expect(waited > 2.5 && waited < 4.5, "the retry waited \(waited) s of 3")
            try await Task.sleep(for: .seconds(2))
            #expect(receiver.requests.count == 2, "exactly once more")
            #expect(try box.metrics().sent == 1 && box.metrics().pending == 0)
            // The outbox followed the steps: its clock is the wall's again, and the times it
            // kept moved with it (the delivery made 6 s ago, not 3 days minus an hour ago).
            #expect(abs(box.now() - wall.read()) < 1, "outbox clock \(box.now()), wall \(wall.read())")
            let made = try #require(box.deliveries().first?.createdAt)
            #expect(abs(wall.read() - made) < 15, "made \(wall.read() - made) s ago by the stepped wall clock")
        }
    }

    /// The hazard the steady clock removes: an outbox reading the wall clock itself sends the
    /// same retry at the step forward, 2 s early (and would have held it an hour at a step back).
    @Test func onTheRawWallClockTheSameRetryGoesOutAtTheStep() async throws {
        let receiver = try Receiver(["--fail-first", "1", "--fail-path-prefix", "/hook"])
        let wall = SteppedWall()
        try await Self.withOutbox(receiver, wall, retry: 3, steady: false) { box in
            try box.deliver(Alert(kind: .fall, incident: "FG-1", time: 0))
            #expect(await until(10) { receiver.requests.count == 1 })
            let failedAt = MonotonicClock.seconds()
            try await Task.sleep(for: .seconds(0.5))
            wall.step(Self.threeDays)
            box.wake.signal()   // any wake-up of the worker (another alert, a reply) does it
            #expect(await until(5) { receiver.requests.count == 2 })
            let waited = MonotonicClock.seconds() - failedAt
            #expect(waited < 1.5, "on the raw wall clock the 3 s retry went after \(waited) s")
        }
    }

    /// A 4 s countdown whose fall alert is armed in the outbox with its fallback: the clock
    /// steps +3 days at 1 s and -1 h at 2 s; the alert goes out once, at the countdown's end
    /// (within 0.2 s), not at the step (the armed fallback would have been due at once).
    @Test func aCountdownKeepsItsLengthAndItsAlertGoesOutOnceAcrossTheSteps() async throws {
        let receiver = try Receiver()
        let wall = SteppedWall()
        try await Self.withOutbox(receiver, wall, retry: 1) { box in
            var section = AlarmSection.defaults
            (section.countdown, section.finalPhase) = (5, 0)
            let alarm = AlarmController(alert: try section.alertConfiguration(), button: section.buttonTimings,
                                        patterns: section.alarmPatterns, buzzer: nil, led: nil, button: nil, sink: box, incidentLog: nil)
            alarm.start()
            defer { alarm.stop() }
            let start = MonotonicClock.seconds()
            alarm.fallSuspected(FallSuspected(detector: "test", impactTime: start, decisionTime: start, peak: 3, phases: [], features: []))
            #expect(await until(3) { (try? box.deliveries().contains { $0.state == .armed }) == true }, "armed on disk")
            try await Task.sleep(for: .seconds(1))
            wall.step(Self.threeDays)
            try await Task.sleep(for: .seconds(1))
            wall.step(-3600)
            try await Task.sleep(for: .seconds(1))
            #expect(receiver.requests.isEmpty, "nothing before the countdown's end")
            #expect(await until(6) { !receiver.requests.isEmpty })
            let countdownEnded = try #require(alarm.snapshot.state.incident != nil ? MonotonicClock.seconds() : nil)
            let dispatched = countdownEnded - start
            #expect(dispatched > 4.8 && dispatched < 5.8, "the alert reached the receiver \(dispatched) s after the detection (countdown 5 s)")
            try await Task.sleep(for: .seconds(2))
            #expect(receiver.requests.filter { $0.path.hasPrefix("/hook") }.count == 1, "exactly once")
        }
    }

    /// The heartbeat at 09:00, looked at as the service does (every 30 s at most) while the
    /// clock runs and steps: +3 days across the heartbeat time, -1 h back across it after it
    /// was sent: once per local day, and none for a day the clock jumped over.
    @Test func theHeartbeatGoesOutOncePerLocalDayAcrossSteps() throws {
        let zone = TimeZone(identifier: "Europe/London")!
        var policy = NotificationPolicy()
        policy.heartbeatAt = "09:00"
        var schedule = HeartbeatSchedule(policy: policy, timeZone: zone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var now = calendar.date(from: DateComponents(year: 2026, month: 11, day: 2, hour: 8, minute: 58))!
        var sent: [Date] = []
        func run(for seconds: Double) {
            let end = now.addingTimeInterval(seconds)
            while now < end {
                guard let look = schedule.look(at: now) else { Issue.record("no heartbeat time"); return }
                if look.send { sent.append(now) }
                now = now.addingTimeInterval(look.sleep)
            }
        }
        run(for: 600)                                   // day 2, 08:58 → 09:08: sent at 09:00
        now = now.addingTimeInterval(-3600)             // back an hour: 08:08, across 09:00 again
        run(for: 3 * 3600)                              // to 11:08: not again
        now = now.addingTimeInterval(-2 * 3600 - 600 - 1)   // 08:57:59 on day 2
        run(for: 60)
        now = now.addingTimeInterval(Self.threeDays)    // +3 days: day 5, 08:58:59, across nothing yet
        run(for: 2 * 86_400)                            // days 5 and 6
        let days = sent.map { calendar.dateComponents([.day, .hour, .minute], from: $0) }
        #expect(days.map(\.day) == [2, 5, 6], "\(days)")
        #expect(days.allSatisfy { $0.hour == 9 && $0.minute == 0 }, "\(days)")
    }
}
