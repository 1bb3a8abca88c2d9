/// The on/off schedule of one output (buzzer or LED) as patterns replace each other: pure, in
/// absolute CLOCK_MONOTONIC nanoseconds, so the player thread only sleeps until
/// ``nextChange`` and sets the level.
///
/// A continuous pattern repeats until the next ``play(_:oneShot:at:)``. A one-shot plays its
/// burst once and is never cut short: patterns asked for while it plays wait for its end
/// (one-shots in order, and only the latest continuous one). After a one-shot with nothing
/// queued the output stays off.
public struct PatternSequencer: Sendable {
    private struct Playing: Sendable {
        var segments: [(on: Bool, ns: Int64)]
        var index: Int
        /// When the current segment started.
        var segmentStart: Int64
        var oneShot: Bool
    }

    private var current: Playing?
    private var queuedOneShots: [OnOffPattern] = []
    private var queuedContinuous: OnOffPattern?
    /// The level the output should have now.
    public private(set) var level = false

    public init() {}

    /// Starts `pattern` at `t`, or queues it behind a one-shot that is still playing. Returns
    /// the new level when the output must change at `t`.
    @discardableResult
    public mutating func play(_ pattern: OnOffPattern, oneShot: Bool, at t: Int64) -> Bool? {
        let before = level
        advance(to: t)
        if let c = current, c.oneShot {
            if oneShot { queuedOneShots.append(pattern) } else { queuedContinuous = pattern }
        } else {
            start(pattern, oneShot: oneShot, at: t)
        }
        return level == before ? nil : level
    }

    /// The next time the level changes, and to what; nil when it stays as it is.
    public func nextChange() -> (time: Int64, on: Bool)? {
        var copy = self
        for _ in 0..<256 {
            guard let b = copy.boundary() else { return nil }
            copy.step(at: b)
            if copy.level != level { return (b, copy.level) }
        }
        return nil  // steady: the level never changes
    }

    /// Applies every boundary up to `t`; returns the level then.
    @discardableResult
    public mutating func advance(to t: Int64) -> Bool {
        while let b = boundary(), b <= t { step(at: b) }
        return level
    }

    /// Whether a one-shot is still playing (nothing queued behind it can start yet).
    public var isPlayingOneShot: Bool { current?.oneShot ?? false }

    private mutating func start(_ pattern: OnOffPattern, oneShot: Bool, at t: Int64) {
        let segs = pattern.segments
        if segs.isEmpty {
            current = nil
            level = false
        } else {
            current = Playing(segments: segs, index: 0, segmentStart: t, oneShot: oneShot)
            level = segs[0].on
        }
    }

    private func boundary() -> Int64? {
        guard let c = current else { return nil }
        if !c.oneShot && c.segments.count == 1 { return nil }  // steady
        return c.segmentStart + c.segments[c.index].ns
    }

    private mutating func step(at b: Int64) {
        guard var c = current else { return }
        c.index += 1
        if c.index < c.segments.count {
            c.segmentStart = b
            current = c
            level = c.segments[c.index].on
        } else if !c.oneShot {
            c.index = 0
            c.segmentStart = b
            current = c
            level = c.segments[0].on
        } else if !queuedOneShots.isEmpty {
            start(queuedOneShots.removeFirst(), oneShot: true, at: b)
        } else if let next = queuedContinuous {
            queuedContinuous = nil
            start(next, oneShot: false, at: b)
        } else {
            current = nil
            level = false
        }
    }
}
