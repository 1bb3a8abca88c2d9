/// A buzzer or LED pattern in whole milliseconds: bursts of `count` pulses, each `onMs` on and
/// `offMs` off, then `pauseMs` more off before the burst repeats (gpiozero's
/// `beep(on_time, off_time, n)` plus a pause).
///
/// `onMs` 0 is silence; `offMs` 0 with `pauseMs` 0 is steady on. Integer milliseconds make
/// every edge an exact nanosecond offset from the pattern's start, so a schedule never drifts.
public struct OnOffPattern: Sendable, Equatable, CustomStringConvertible {
    /// Milliseconds each pulse is on.
    public var onMs: Int
    /// Milliseconds off after each pulse.
    public var offMs: Int
    /// Pulses per burst.
    public var count: Int
    /// Extra milliseconds off after the burst.
    public var pauseMs: Int

    public init(onMs: Int, offMs: Int = 0, count: Int = 1, pauseMs: Int = 0) {
        (self.onMs, self.offMs, self.count, self.pauseMs) = (onMs, offMs, count, pauseMs)
    }

    /// Always off.
    public static let off = OnOffPattern(onMs: 0)
    /// Always on.
    public static let steady = OnOffPattern(onMs: 1000)

    /// One burst as (level, nanoseconds) runs, zero-length runs dropped and equal neighbours
    /// merged; empty for silence.
    public var segments: [(on: Bool, ns: Int64)] {
        guard onMs > 0, count > 0 else { return [] }
        var runs: [(on: Bool, ns: Int64)] = []
        func add(_ on: Bool, _ ms: Int) {
            guard ms > 0 else { return }
            let ns = Int64(saturating: Double(ms) * 1e6)
            if let last = runs.last, last.on == on { runs[runs.count - 1].ns += ns } else { runs.append((on, ns)) }
        }
        for i in 0..<count {
            add(true, onMs)
            add(false, offMs + (i == count - 1 ? pauseMs : 0))
        }
        return runs
    }

    /// One burst's length in nanoseconds.
    public var burstNanoseconds: Int64 { segments.reduce(0) { $0 + $1.ns } }

    /// `200/800 ms ×1`
    public var description: String {
        if onMs == 0 { return "off" }
        if offMs == 0 && pauseMs == 0 { return "steady" }
        return "\(onMs)/\(offMs) ms ×\(count)" + (pauseMs > 0 ? " + \(pauseMs) ms" : "")
    }
}
