/// How the alarm's parts are wired to the GPIO chip: the buzzer, the abort button and the
/// optional status LED, with their polarity.
public struct GPIOWiring: Sendable, Equatable {
    /// A chip's name (`gpiochip0`), label (`pinctrl-bcm2711`) or path (`/dev/gpiochip0`).
    public var chip: String
    /// The label `gpioinfo` shows on our lines.
    public var consumer: String
    public var buzzer: BuzzerWiring
    public var button: ButtonWiring
    /// nil: no status LED.
    public var led: LEDWiring?

    public init(chip: String, consumer: String, buzzer: BuzzerWiring, button: ButtonWiring, led: LEDWiring?) {
        (self.chip, self.consumer, self.buzzer, self.button, self.led) = (chip, consumer, buzzer, button, led)
    }
}

/// The buzzer's line and how it makes sound.
public struct BuzzerWiring: Sendable, Equatable {
    /// How the buzzer makes sound.
    public enum Kind: Sendable, Equatable, CaseIterable {
        /// Has its own oscillator: the line switches it on and off.
        case active
        /// A bare piezo: needs a tone, by toggling the line or through a PWM channel.
        case passive
    }

    /// A line name (`GPIO18`) or offset (`18`).
    public var line: String
    /// Key `type` in the file.
    public var type: Kind
    /// Tones a passive buzzer can play, in Hz.
    public static let toneRange: ClosedRange<Double> = 20...20_000
    /// The tone of a passive buzzer, Hz.
    public var toneHz: Double
    /// A passive buzzer's PWM chip number under /sys/class/pwm; nil toggles the line.
    public var pwmChip: Int?
    public var pwmChannel: Int
    public var activeLow: Bool

    public init(line: String, type: Kind, toneHz: Double, pwmChip: Int?, pwmChannel: Int, activeLow: Bool) {
        self.line = line
        self.type = type
        self.toneHz = toneHz
        self.pwmChip = pwmChip
        self.pwmChannel = pwmChannel
        self.activeLow = activeLow
    }
}

/// The internal bias resistor of an input line.
public enum LineBias: Sendable, Equatable, CaseIterable {
    case pullUp, pullDown, disable, asIs
}

/// The abort button's line.
public struct ButtonWiring: Sendable, Equatable {
    /// A line name (`GPIO17`) or offset (`17`).
    public var line: String
    public var bias: LineBias
    /// Pressed reads low (a button to ground).
    public var activeLow: Bool

    public init(line: String, bias: LineBias, activeLow: Bool) {
        (self.line, self.bias, self.activeLow) = (line, bias, activeLow)
    }
}

/// The status LED's line.
public struct LEDWiring: Sendable, Equatable {
    /// A line name (`GPIO27`) or offset (`27`).
    public var line: String
    public var activeLow: Bool

    public init(line: String, activeLow: Bool) { (self.line, self.activeLow) = (line, activeLow) }
}
