/// The `gpio` section of the configuration file: which chip, and the pins of the buzzer, the
/// abort button and the optional status LED, with their polarity. The defaults are the common
/// Raspberry Pi wiring: buzzer on GPIO18 (active high), button to ground on GPIO17 with the
/// internal pull-up (active low), no LED.
///
/// ```yaml
/// gpio:
///   enabled: true            # false: the console stands in (no-hardware bench, development)
///   library: auto            # auto: libgpiod.so.3 (2.x) if present, else libgpiod.so.2 (1.6); v1, v2
///   chip: gpiochip0          # name, label (pinctrl-bcm2711) or path (/dev/gpiochip0)
///   consumer: fallguard      # the label gpioinfo shows on our lines
///   buzzer:
///     line: GPIO18           # line name or offset (18)
///     type: active           # active: on/off; passive: a tone
///     tone-hz: 2000          # passive only, 20...20000
///     pwm-chip: 0            # passive only: /sys/class/pwm/pwmchip0 instead of toggling the line
///     pwm-channel: 0
///     active-low: false
///   button: {line: GPIO17, bias: pull-up, active-low: true}
///   led: {line: GPIO27, active-low: false}
/// ```
public struct GPIOSection: ConfigSection, Equatable {
    /// false: no GPIO at all; the buzzer and LED are shown on the console and the keyboard is
    /// the button (when there is a terminal).
    public var enabled: Bool = true
    /// Which libgpiod the lines go through (opened at run time, not linked).
    public var library: Library = .auto
    public var chip: String
    public var consumer: String
    public var buzzer: Buzzer
    public var button: Button
    /// nil: no status LED.
    public var led: LED?

    public init(chip: String = "gpiochip0", consumer: String = "fallguard", buzzer: Buzzer = Buzzer(),
                button: Button = Button(), led: LED? = nil) {
        self.chip = chip
        self.consumer = consumer
        self.buzzer = buzzer
        self.button = button
        self.led = led
    }

    /// The libgpiod C API: both are opened with dlopen, so one build runs on Debian 12 /
    /// Raspberry Pi OS bookworm (1.6) and Debian 13 / trixie (2.x).
    public enum Library: String, Sendable, Equatable, Codable, CaseIterable {
        /// `libgpiod.so.3` (2.x) when the system has it, else `libgpiod.so.2` (1.6).
        case auto
        /// libgpiod 1.6 (`libgpiod.so.2`, uAPI v1), only.
        case v1
        /// libgpiod 2.x (`libgpiod.so.3`, uAPI v2), only.
        case v2
    }

    /// How the buzzer makes sound.
    public enum BuzzerType: String, Sendable, Equatable, Codable, CaseIterable {
        /// Has its own oscillator: the line switches it on and off.
        case active
        /// A bare piezo: needs a tone, by toggling the line or through a PWM channel.
        case passive
    }

    /// Internal bias resistor of an input line.
    public enum Bias: String, Sendable, Equatable, Codable, CaseIterable {
        case pullUp = "pull-up", pullDown = "pull-down", disable, asIs = "as-is"
    }

    public struct Buzzer: Sendable, Equatable, Codable {
        public var line: String
        public var type: BuzzerType
        public var toneHz: Double
        /// With `type: passive`: the PWM chip number under /sys/class/pwm; nil toggles the line.
        public var pwmChip: Int?
        public var pwmChannel: Int
        public var activeLow: Bool

        public init(line: String = "GPIO18", type: BuzzerType = .active, toneHz: Double = 2000,
                    pwmChip: Int? = nil, pwmChannel: Int = 0, activeLow: Bool = false) {
            self.line = line
            self.type = type
            self.toneHz = toneHz
            self.pwmChip = pwmChip
            self.pwmChannel = pwmChannel
            self.activeLow = activeLow
        }

        enum CodingKeys: String, CodingKey {
            case line, type, toneHz = "tone-hz", pwmChip = "pwm-chip", pwmChannel = "pwm-channel", activeLow = "active-low"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Buzzer()
            line = try decodeLine(c, .line) ?? d.line
            type = try c.decodeIfPresent(BuzzerType.self, forKey: .type) ?? d.type
            toneHz = try c.decodeIfPresent(Double.self, forKey: .toneHz) ?? d.toneHz
            pwmChip = try c.decodeIfPresent(Int.self, forKey: .pwmChip)
            pwmChannel = try c.decodeIfPresent(Int.self, forKey: .pwmChannel) ?? d.pwmChannel
            activeLow = try c.decodeIfPresent(Bool.self, forKey: .activeLow) ?? d.activeLow
        }
    }

    public struct Button: Sendable, Equatable, Codable {
        public var line: String
        public var bias: Bias
        /// Pressed reads low (a button to ground).
        public var activeLow: Bool

        public init(line: String = "GPIO17", bias: Bias = .pullUp, activeLow: Bool = true) {
            self.line = line
            self.bias = bias
            self.activeLow = activeLow
        }

        enum CodingKeys: String, CodingKey { case line, bias, activeLow = "active-low" }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Button()
            line = try decodeLine(c, .line) ?? d.line
            bias = try c.decodeIfPresent(Bias.self, forKey: .bias) ?? d.bias
            activeLow = try c.decodeIfPresent(Bool.self, forKey: .activeLow) ?? d.activeLow
        }
    }

    public struct LED: Sendable, Equatable, Codable {
        public var line: String
        public var activeLow: Bool

        public init(line: String, activeLow: Bool = false) {
            self.line = line
            self.activeLow = activeLow
        }

        enum CodingKeys: String, CodingKey { case line, activeLow = "active-low" }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let l = try decodeLine(c, .line) else {
                throw DecodingError.keyNotFound(CodingKeys.line, .init(codingPath: c.codingPath, debugDescription: "the LED needs a line"))
            }
            line = l
            activeLow = try c.decodeIfPresent(Bool.self, forKey: .activeLow) ?? false
        }
    }

    enum CodingKeys: String, CodingKey { case enabled, library, chip, consumer, buzzer, button, led }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = GPIOSection()
        enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled) ?? d.enabled
        library = try c.decodeIfPresent(Library.self, forKey: .library) ?? d.library
        chip = try c.decodeIfPresent(String.self, forKey: .chip) ?? d.chip
        consumer = try c.decodeIfPresent(String.self, forKey: .consumer) ?? d.consumer
        buzzer = try c.decodeIfPresent(Buzzer.self, forKey: .buzzer) ?? d.buzzer
        button = try c.decodeIfPresent(Button.self, forKey: .button) ?? d.button
        led = try c.decodeIfPresent(LED.self, forKey: .led)
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        if chip.isEmpty { p.append(ConfigProblem(path + ["chip"], "must name a chip (gpiochip0, a label or a /dev path)")) }
        if consumer.isEmpty || consumer.utf8.count > 31 {
            p.append(ConfigProblem(path + ["consumer"], "must be 1 to 31 bytes (the kernel's consumer label)"))
        }
        var used: [String: String] = [:]
        for (part, line) in [("buzzer", buzzer.line), ("button", button.line), ("led", led?.line)] {
            guard let line else { continue }
            if line.isEmpty {
                p.append(ConfigProblem(path + [part, "line"], "must name a line (GPIO17) or an offset (17)"))
            } else if let other = used[line] {
                p.append(ConfigProblem(path + [part, "line"], "line \(line) is already the \(other)'s"))
            } else {
                used[line] = part
            }
        }
        if buzzer.type == .passive, !(20...20_000).contains(buzzer.toneHz) {
            p.append(ConfigProblem(path + ["buzzer", "tone-hz"], "\(buzzer.toneHz) Hz is outside 20...20000 Hz"))
        }
        if let chip = buzzer.pwmChip {
            if buzzer.type != .passive {
                p.append(ConfigProblem(path + ["buzzer", "pwm-chip"], "only a passive buzzer uses PWM (set type: passive)"))
            }
            if chip < 0 { p.append(ConfigProblem(path + ["buzzer", "pwm-chip"], "must be 0 or more")) }
        }
        if buzzer.pwmChannel < 0 { p.append(ConfigProblem(path + ["buzzer", "pwm-channel"], "must be 0 or more")) }
        return p
    }
}

/// A line given as a name (`GPIO17`) or as an offset (`17`, string or number).
private func decodeLine<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> String? {
    if let n = try? c.decodeIfPresent(Int.self, forKey: key) { return String(n) }
    return try c.decodeIfPresent(String.self, forKey: key)
}
