import FallGuardCore
import Foundation

/// The local clock (Core's ``SystemLocalTime``, through the C library) for Foundation's `Date`.
extension SystemLocalTime {
    /// The local calendar fields at `date`.
    static func fields(_ date: Date) -> tm { fields(secondsSince1970: date.timeIntervalSince1970) }

    /// The first instant after `date` at which the local clock shows `time`.
    static func next(_ time: LocalTime, after date: Date) -> Date? {
        next(time, after: date.timeIntervalSince1970).map(Date.init(timeIntervalSince1970:))
    }

    /// `2026-11-22T14:03:05+0100` at the local offset (`Z` when it is zero).
    public static func iso8601(_ date: Date) -> String { iso8601(secondsSince1970: date.timeIntervalSince1970) }
}
