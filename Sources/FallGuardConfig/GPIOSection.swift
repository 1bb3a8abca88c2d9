import FallGuardHardware

/// `gpio:` — which chip, and the pins of the buzzer, the abort button and the optional status
/// LED, with their polarity. The defaults are the common Raspberry Pi wiring: buzzer on GPIO18
/// (active high), button to ground on GPIO17 with the internal pull-up (active low), no LED.
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
public struct GPIOSection: ConfigSection, Codable, Equatable {
    /// false: no GPIO at all; the buzzer and LED are shown on the console and the keyboard is
    /// the button (when there is a terminal).
    public var enabled: Bool
    /// Which libgpiod the lines go through (opened at run time, not linked).
    public var library: GPIOLibraryChoice
    public var wiring: GPIOWiring

    public init(enabled: Bool, library: GPIOLibraryChoice = .auto, wiring: GPIOWiring) {
        (self.enabled, self.library, self.wiring) = (enabled, library, wiring)
    }

    /// What an empty section gives.
    public init() { self = Self.defaults }

    /// Every key's default.
    public static let defaults = GPIOSection(enabled: true, library: .auto, wiring: GPIOWiring(
        chip: "gpiochip0", consumer: "fallguard",
        buzzer: BuzzerWiring(line: "GPIO18", kind: .active, toneHz: 2000, pwmChip: nil, pwmChannel: 0, activeLow: false),
        button: ButtonWiring(line: "GPIO17", bias: .pullUp, activeLow: true),
        led: nil))
    /// `led.active-low` when the LED is given without it.
    public static let ledActiveLowDefault = false

    /// The words of `buzzer.type`.
    public static let buzzerTypes: [(word: String, kind: BuzzerWiring.Kind)] = [("active", .active), ("passive", .passive)]
    /// The words of `button.bias` (and of the `--bias` options).
    public static let biases: [(word: String, bias: LineBias)] = [
        ("pull-up", .pullUp), ("pull-down", .pullDown), ("disable", .disable), ("as-is", .asIs),
    ]

    /// The bias named `word`, nil when it names none.
    public static func bias(_ word: String) -> LineBias? { BiasWords.value(named: word) }

    /// The word for `bias`.
    public static func word(for bias: LineBias) -> String { BiasWords.word(for: bias) }

    enum CodingKeys: String, CodingKey { case enabled, library, chip, consumer, buzzer, button, led }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self.defaults
        enabled = try c.value(.enabled, default: d.enabled)
        library = try c.word(RawWords<GPIOLibraryChoice>.self, .library, default: d.library)
        wiring = GPIOWiring(chip: try c.value(.chip, default: d.wiring.chip),
                            consumer: try c.value(.consumer, default: d.wiring.consumer),
                            buzzer: try c.section(BuzzerWiring.self, forKey: .buzzer) ?? d.wiring.buzzer,
                            button: try c.section(ButtonWiring.self, forKey: .button) ?? d.wiring.button,
                            led: try c.section(LEDWiring.self, forKey: .led))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(enabled, forKey: .enabled)
        try c.encode(library, as: RawWords<GPIOLibraryChoice>.self, forKey: .library)
        try c.encode(wiring.chip, forKey: .chip)
        try c.encode(wiring.consumer, forKey: .consumer)
        try c.encode(section: wiring.buzzer, forKey: .buzzer)
        try c.encode(section: wiring.button, forKey: .button)
        if let led = wiring.led { try c.encode(section: led, forKey: .led) } else { try c.encodeNil(forKey: .led) }
    }

    public func problems(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        let (chip, consumer, buzzer) = (wiring.chip, wiring.consumer, wiring.buzzer)
        if chip.isEmpty { p.append(ConfigProblem(path + ["chip"], "must name a chip (gpiochip0, a label or a /dev path)")) }
        if consumer.isEmpty || consumer.utf8.count > 31 {
            p.append(ConfigProblem(path + ["consumer"], "must be 1 to 31 bytes (the kernel's consumer label)"))
        }
        var used: [String: String] = [:]
        for (part, line) in [("buzzer", buzzer.line), ("button", wiring.button.line), ("led", wiring.led?.line)] {
            guard let line else { continue }
            if line.isEmpty {
                p.append(ConfigProblem(path + [part, "line"], "must name a line (GPIO17) or an offset (17)"))
            } else if let other = used[line] {
                p.append(ConfigProblem(path + [part, "line"], "line \(line) is already the \(other)'s"))
            } else {
                used[line] = part
            }
        }
        if buzzer.kind == .passive, !BuzzerWiring.toneRange.contains(buzzer.toneHz) {
            p.append(ConfigProblem(path + ["buzzer", "tone-hz"], "\(buzzer.toneHz) Hz is outside 20...20000 Hz"))
        }
        if let chip = buzzer.pwmChip {
            if buzzer.kind != .passive {
                p.append(ConfigProblem(path + ["buzzer", "pwm-chip"], "only a passive buzzer uses PWM (set type: passive)"))
            }
            if chip < 0 { p.append(ConfigProblem(path + ["buzzer", "pwm-chip"], "must be 0 or more")) }
        }
        if buzzer.pwmChannel < 0 { p.append(ConfigProblem(path + ["buzzer", "pwm-channel"], "must be 0 or more")) }
        return p
    }
}

// The parts' keys; their checks are the section's (lines may not be shared).

extension BuzzerWiring: ConfigSection {
    enum CodingKeys: String, CodingKey {
        case line, type, toneHz = "tone-hz", pwmChip = "pwm-chip", pwmChannel = "pwm-channel", activeLow = "active-low"
    }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = GPIOSection.defaults.wiring.buzzer
        self.init(line: try decodeLine(c, .line) ?? d.line,
                  kind: try c.word(BuzzerTypeWords.self, .type, default: d.kind),
                  toneHz: try c.value(.toneHz, default: d.toneHz),
                  pwmChip: try c.decodeIfPresent(Int.self, forKey: .pwmChip),
                  pwmChannel: try c.value(.pwmChannel, default: d.pwmChannel),
                  activeLow: try c.value(.activeLow, default: d.activeLow))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(line, forKey: .line)
        try c.encode(kind, as: BuzzerTypeWords.self, forKey: .type)
        try c.encode(toneHz, forKey: .toneHz)
        try c.encodeOptional(pwmChip, forKey: .pwmChip)
        try c.encode(pwmChannel, forKey: .pwmChannel)
        try c.encode(activeLow, forKey: .activeLow)
    }

    public func problems(at path: [String]) -> [ConfigProblem] { [] }
}

extension ButtonWiring: ConfigSection {
    enum CodingKeys: String, CodingKey { case line, bias, activeLow = "active-low" }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = GPIOSection.defaults.wiring.button
        self.init(line: try decodeLine(c, .line) ?? d.line,
                  bias: try c.word(BiasWords.self, .bias, default: d.bias),
                  activeLow: try c.value(.activeLow, default: d.activeLow))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(line, forKey: .line)
        try c.encode(bias, as: BiasWords.self, forKey: .bias)
        try c.encode(activeLow, forKey: .activeLow)
    }

    public func problems(at path: [String]) -> [ConfigProblem] { [] }
}

extension LEDWiring: ConfigSection {
    enum CodingKeys: String, CodingKey { case line, activeLow = "active-low" }

    public init(fromConfig decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let line = try decodeLine(c, .line) else {
            throw DecodingError.keyNotFound(CodingKeys.line, .init(codingPath: c.codingPath, debugDescription: "the LED needs a line"))
        }
        self.init(line: line, activeLow: try c.value(.activeLow, default: GPIOSection.ledActiveLowDefault))
    }

    public func encodeConfig(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(line, forKey: .line)
        try c.encode(activeLow, forKey: .activeLow)
    }

    public func problems(at path: [String]) -> [ConfigProblem] { [] }
}

/// A line given as a name (`GPIO17`) or as an offset (`17`, string or number).
private func decodeLine<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> String? {
    if let n = try? c.decodeIfPresent(Int.self, forKey: key) { return String(n) }
    return try c.decodeIfPresent(String.self, forKey: key)
}

enum BuzzerTypeWords: WordList {
    static var words: [(word: String, value: BuzzerWiring.Kind)] { GPIOSection.buzzerTypes.map { ($0.word, $0.kind) } }
}

enum BiasWords: WordList {
    static var words: [(word: String, value: LineBias)] { GPIOSection.biases.map { ($0.word, $0.bias) } }
}
