/// What the buzzer plays for each sound and the status LED shows for each state.
public struct AlarmPatterns: Sendable, Equatable {
    public var sounds: [AlarmSound: OnOffPattern]
    public var led: [StatusIndicator: OnOffPattern]

    public init(sounds: [AlarmSound: OnOffPattern], led: [StatusIndicator: OnOffPattern]) {
        (self.sounds, self.led) = (sounds, led)
    }

    /// The buzzer's pattern for `sound` (off when none is given).
    public func pattern(for sound: AlarmSound) -> OnOffPattern { sounds[sound] ?? .off }

    /// The LED's pattern in `indicator` (off when none is given).
    public func ledPattern(for indicator: StatusIndicator) -> OnOffPattern { led[indicator] ?? .off }
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
