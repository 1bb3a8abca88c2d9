import FallGuardCore
import FallGuardHardware
import Logging

/// The alarm's buzzer, LED and button: GPIO lines, the console (the no-hardware demo and
/// benches), or nothing. One choice, made here for `run`, `alarm` and `check-config`.
public struct AlarmOutputs: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Lines through libgpiod: a missing or busy line stops start-up (exit 69).
        case gpio
        /// A status line on standard error and the keyboard as the button.
        case console
        /// No buzzer, LED or button (the button's help requests too are gone).
        case none
    }

    public let buzzer: PatternPlayer?
    public let led: PatternPlayer?
    public let button: (any ButtonSource)?
    /// The console's status line, when the console stands in for the hardware.
    public let display: ConsoleAlarmDisplay?
    /// The libgpiod the lines go through (nil on the console or with a test double).
    public var library: GPIOLibraryInfo? = nil

    /// Requests the lines (GPIO) or sets up the console. Throws ``GPIOError`` naming the chip
    /// and line that is missing or busy; nothing sounds before every part is there.
    /// The lines go through the libgpiod `library` chooses (``GPIOLibrary/load(_:)``), or
    /// through `backend` (tests pass an in-memory chip).
    public static func make(_ kind: Kind, gpio: GPIOWiring, library: GPIOLibraryChoice = .auto, button timings: ButtonTimings,
                            patterns: AlarmPatterns, logger: Logger,
                            backend: (any GPIOBackend)? = nil) throws(GPIOError) -> AlarmOutputs {
        switch kind {
        case .gpio:
            let backend = if let backend { backend } else { try GPIOLibrary.load(library) }
            let parts = try GPIOAlarmParts(gpio: gpio, button: timings, backend: backend)
            if let l = parts.library { logger.notice("gpio: \(l) (gpio.library: \(library.rawValue)), chip \(gpio.chip)") }
            parts.button.onError = { logger.error("\($0) (the button no longer works)") }
            parts.buzzer.onError = { logger.error("\($0.description)") }
            return AlarmOutputs(buzzer: parts.buzzer, led: parts.led, button: parts.button, display: nil, library: parts.library)
        case .console:
            let display = ConsoleAlarmDisplay(patterns: patterns)
            let keys = ConsoleButton(longPress: timings.longPress)
            if !keys.isAvailable { logger.notice("standard input is not a terminal: no console button") }
            return AlarmOutputs(buzzer: PatternPlayer(name: "buzzer", output: display.buzzer),
                                led: PatternPlayer(name: "led", output: display.led), button: keys, display: display)
        case .none:
            return AlarmOutputs(buzzer: nil, led: nil, button: nil, display: nil)
        }
    }
}
