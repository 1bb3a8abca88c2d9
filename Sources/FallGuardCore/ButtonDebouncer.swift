/// What a debounced button did, at kernel edge times (CLOCK_MONOTONIC ns).
public enum ButtonEvent: Sendable, Equatable {
    /// The button went down: the time of the edge that began the stable pressed level.
    case pressed(at: Int64)
    /// The button has been down for the long-press time (a help request, for the engine).
    case held(at: Int64)
    /// The button came up after `duration` ns; `long` when that reached the long-press time.
    case released(at: Int64, duration: Int64, long: Bool)
}

/// Software debounce and short/long press classification for a push button, fed with raw
/// edges and their kernel timestamps. Pure: the GPIO thread calls ``edge(pressed:at:)`` for
/// each edge and ``advance(to:)`` at ``nextDeadline``.
///
/// A level counts once it has held for `debounce` without another edge; the event carries
/// the time of the edge that began it, so a 30 ms debounce delays the report, not the time.
/// Contact bounce (10 edges in 5 ms) therefore gives one press.
public struct ButtonDebouncer: Sendable, Equatable {
    /// Default 30 ms.
    public let debounce: Int64
    /// Default 2 s.
    public let longPress: Int64
    /// The debounced level.
    public private(set) var isPressed: Bool
    private var raw: Bool
    private var rawSince: Int64
    private var pressStart: Int64?
    private var heldReported = false

    /// `initiallyPressed`: the level read when the line was requested (a button held at
    /// start-up is reported only after it is released and pressed again).
    public init(debounce: Int64 = 30_000_000, longPress: Int64 = 2_000_000_000, initiallyPressed: Bool = false, at t: Int64 = 0) {
        self.debounce = max(0, debounce)
        self.longPress = max(1, longPress)
        isPressed = initiallyPressed
        raw = initiallyPressed
        rawSince = t
        heldReported = initiallyPressed
    }

    /// When ``advance(to:)`` has something to do; nil when nothing is pending.
    public var nextDeadline: Int64? {
        let settle: Int64? = raw != isPressed ? rawSince + debounce : nil
        // A release not yet confirmed stops the long press unless it came after the threshold.
        var held: Int64?
        if isPressed, !heldReported, let s = pressStart, raw || rawSince >= s + longPress { held = s + longPress }
        switch (settle, held) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }

    /// A raw edge: the line now reads `pressed` (logical, active-low already applied).
    public mutating func edge(pressed: Bool, at t: Int64) -> [ButtonEvent] {
        var events = advance(to: t - 1)
        if pressed != raw {
            raw = pressed
            rawSince = t
        }
        if debounce == 0 { events += advance(to: t) }
        return events
    }

    /// Reports what became certain up to `t`, in time order.
    public mutating func advance(to t: Int64) -> [ButtonEvent] {
        var events: [ButtonEvent] = []
        while let d = nextDeadline, d <= t {
            if raw != isPressed, rawSince + debounce == d {
                isPressed = raw
                if raw {
                    pressStart = rawSince
                    heldReported = false
                    events.append(.pressed(at: rawSince))
                } else if let s = pressStart {
                    let duration = rawSince - s
                    events.append(.released(at: rawSince, duration: duration, long: duration >= longPress))
                    pressStart = nil
                } else {
                    heldReported = false  // released after being held at start-up
                }
            } else {
                heldReported = true
                events.append(.held(at: d))
            }
        }
        return events
    }
}

/// How the abort button's edges are read: the debounce time, and how long a press is held to
/// be a help request.
public struct ButtonTimings: Sendable, Equatable {
    /// Allowed debounce times, in milliseconds.
    public static let debounceRange: ClosedRange<Int> = 0...500

    /// Milliseconds a level must hold to count.
    public var debounceMs: Int
    /// Seconds held for a long press (a help request).
    public var longPress: Double

    public init(debounceMs: Int, longPress: Double) { (self.debounceMs, self.longPress) = (debounceMs, longPress) }

    /// A debouncer with these timings, in nanoseconds.
    public func debouncer(initiallyPressed: Bool = false, at t: Int64 = 0) -> ButtonDebouncer {
        ButtonDebouncer(debounce: Int64(saturating: Double(debounceMs) * 1e6), longPress: Int64(saturating: (longPress * 1e9).rounded()),
                        initiallyPressed: initiallyPressed, at: t)
    }
}
