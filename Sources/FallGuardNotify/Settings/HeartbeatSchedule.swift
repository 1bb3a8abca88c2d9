import FallGuardCore
import Foundation

/// When the daily heartbeat goes out: once per local day at `policy.heartbeat-at`, whatever
/// the wall clock does. Nothing is kept but the local day last sent: each look takes the
/// heartbeat time nearest before now (within ``lateness``) from the wall clock as it is then,
/// so a step forward (a Pi's clock set by NTP days later) sends the day it lands in once and no
/// stale one, and a step back across the heartbeat time does not send that day again.
public struct HeartbeatSchedule: Sendable {
    public let policy: NotificationPolicy
    /// nil: the bridge's own zone, through the C library.
    public let timeZone: TimeZone?
    /// The local day (year, day of year) of the last heartbeat sent.
    public private(set) var lastDay: [Int]?
    /// How long after the heartbeat time a look still sends it; the service looks every
    /// ``maximumSleep`` seconds at most, so only a step of the clock past it skips it.
    public static let lateness = 120.0
    public static let maximumSleep = 30.0

    public init(policy: NotificationPolicy, timeZone: TimeZone? = nil) { (self.policy, self.timeZone) = (policy, timeZone) }

    /// The policy in force now (a reload may change the time) with the day last sent kept.
    public init(policy: NotificationPolicy, keeping old: HeartbeatSchedule) {
        self.init(policy: policy, timeZone: old.timeZone)
        lastDay = old.lastDay
    }

    /// At wall time `now`: whether to send the heartbeat now, and how long to sleep before the
    /// next look (nil: no heartbeat configured).
    public mutating func look(at now: Date) -> (send: Bool, sleep: Double)? {
        guard let due = policy.nextHeartbeat(after: now.addingTimeInterval(-Self.lateness), timeZone: timeZone) else { return nil }
        var send = false
        if due <= now, day(due) != lastDay {
            send = true
            lastDay = day(due)
        }
        let next = due <= now ? policy.nextHeartbeat(after: now, timeZone: timeZone) ?? due : due
        return (send, min(Self.maximumSleep, max(0.2, next.timeIntervalSince(now))))
    }

    func day(_ date: Date) -> [Int] {
        if let timeZone {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            return [c.year ?? 0, c.month ?? 0, c.day ?? 0]
        }
        let t = SystemLocalTime.fields(date)
        return [Int(t.tm_year), Int(t.tm_yday)]
    }
}
