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
