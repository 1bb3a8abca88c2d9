/// A buzzer or LED pattern in whole milliseconds: bursts of `count` pulses, each `on-ms` on and
/// `off-ms` off, then `pause-ms` more off before the burst repeats (gpiozero's
/// `beep(on_time, off_time, n)` plus a pause).
///
/// `on-ms: 0` is silence; `off-ms: 0` with `pause-ms: 0` is steady on. Integer milliseconds make
/// every edge an exact nanosecond offset from the pattern's start, so a schedule never drifts.
public struct OnOffPattern: Sendable, Equatable, Codable, CustomStringConvertible {
    /// Milliseconds each pulse is on (key `on-ms`).
    public var onMs: Int
    /// Milliseconds off after each pulse (key `off-ms`).
    public var offMs: Int
    /// Pulses per burst (key `count`, default 1).
    public var count: Int
    /// Extra milliseconds off after the burst (key `pause-ms`, default 0).
    public var pauseMs: Int

    public init(onMs: Int, offMs: Int = 0, count: Int = 1, pauseMs: Int = 0) {
        self.onMs = onMs
        self.offMs = offMs
        self.count = count
        self.pauseMs = pauseMs
    }

    /// Always off.
    public static let off = OnOffPattern(onMs: 0)
    /// Always on.
    public static let steady = OnOffPattern(onMs: 1000)

    enum CodingKeys: String, CodingKey {
        case onMs = "on-ms", offMs = "off-ms", count, pauseMs = "pause-ms"
    }

    /// Missing keys take 0 ms and a count of 1.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        onMs = try c.decodeIfPresent(Int.self, forKey: .onMs) ?? 0
        offMs = try c.decodeIfPresent(Int.self, forKey: .offMs) ?? 0
        count = try c.decodeIfPresent(Int.self, forKey: .count) ?? 1
        pauseMs = try c.decodeIfPresent(Int.self, forKey: .pauseMs) ?? 0
    }

    /// One burst as (level, nanoseconds) runs, zero-length runs dropped and equal neighbours
    /// merged; empty for silence.
    public var segments: [(on: Bool, ns: Int64)] {
        guard onMs > 0, count > 0 else { return [] }
        var runs: [(on: Bool, ns: Int64)] = []
        func add(_ on: Bool, _ ms: Int) {
            guard ms > 0 else { return }
            let ns = Int64(ms) * 1_000_000
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

    /// Everything wrong with it, keys relative to `path`.
    public func problems(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        for (key, v) in [("on-ms", onMs), ("off-ms", offMs), ("pause-ms", pauseMs)] where !(0...600_000).contains(v) {
            p.append(ConfigProblem(path + [key], "\(v) ms is outside 0...600000 ms"))
        }
        if !(1...100).contains(count) { p.append(ConfigProblem(path + ["count"], "\(count) is outside 1...100")) }
        return p
    }

    /// `200/800 ms ×1`
    public var description: String {
        if onMs == 0 { return "off" }
        if offMs == 0 && pauseMs == 0 { return "steady" }
        return "\(onMs)/\(offMs) ms ×\(count)" + (pauseMs > 0 ? " + \(pauseMs) ms" : "")
    }
}
