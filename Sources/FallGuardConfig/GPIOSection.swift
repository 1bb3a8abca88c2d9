import FallGuardConfigKeys
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
public struct GPIOSection: KeyedSection, Codable, Equatable {
    /// false: no GPIO at all; the buzzer and LED are shown on the console and the keyboard is
    /// the button (when there is a terminal).
    public var enabled: Bool
    /// Which libgpiod the lines go through (opened at run time, not linked).
    public var library: GPIOLibraryChoice
    public var wiring: GPIOWiring

    /// What an empty section gives: every key's default.
    public init() {
        enabled = true
        library = .auto
        wiring = GPIOWiring(chip: "gpiochip0", consumer: "fallguard", buzzer: BuzzerWiring(), button: ButtonWiring(), led: nil)
    }

    /// Every key's default.
    public static let defaults = GPIOSection()
    /// `led.active-low` when the LED is given without it.
    public static let ledActiveLowDefault = false

    /// The words of `buzzer.type`.
    public static let buzzerTypes: [(word: String, type: BuzzerWiring.Kind)] = [("active", .active), ("passive", .passive)]
    /// The words of `button.bias` (and of the `--bias` options).
    public static let biases: [(word: String, bias: LineBias)] = [
        ("pull-up", .pullUp), ("pull-down", .pullDown), ("disable", .disable), ("as-is", .asIs),
    ]

    /// The bias named `word`, nil when it names none.
    public static func bias(_ word: String) -> LineBias? { BiasWords.value(named: word) }

    /// The word for `bias`.
    public static func word(for bias: LineBias) -> String { BiasWords.word(for: bias) }

    public static var keys: [ConfigKey<Self>] {
        [.value("enabled", \.enabled), .word("library", \.library, RawWords<GPIOLibraryChoice>.self),
         .value("chip", \.wiring.chip), .value("consumer", \.wiring.consumer), .section("buzzer", \.wiring.buzzer),
         .section("button", \.wiring.button), .section("led", \.wiring.led)]
    }

    public func checks(at path: [String]) -> [ConfigProblem] {
        var p: [ConfigProblem] = []
        let (chip, consumer, buzzer) = (wiring.chip, wiring.consumer, wiring.buzzer)
        if chip.isEmpty { p.append(ConfigProblem(Self.at(path, \.wiring.chip), "must name a chip (gpiochip0, a label or a /dev path)")) }
        if consumer.isEmpty || consumer.utf8.count > 31 {
            p.append(ConfigProblem(Self.at(path, \.wiring.consumer), "must be 1 to 31 bytes (the kernel's consumer label)"))
        }
        var used: [String: String] = [:]
        let lines = [(Self.at(path, \.wiring.buzzer, \.line), buzzer.line), (Self.at(path, \.wiring.button, \.line), wiring.button.line),
                     (LEDWiring.at(Self.at(path, \.wiring.led), \.line), wiring.led?.line)]
        for (at, line) in lines {
            guard let line else { continue }
            let part = at[at.count - 2]
            if line.isEmpty {
                p.append(ConfigProblem(at, "must name a line (GPIO17) or an offset (17)"))
            } else if let other = used[line] {
                p.append(ConfigProblem(at, "line \(line) is already the \(other)'s"))
            } else {
                used[line] = part
            }
        }
        if buzzer.type == .passive, !BuzzerWiring.toneRange.contains(buzzer.toneHz) {
            p.append(ConfigProblem(Self.at(path, \.wiring.buzzer, \.toneHz), "\(buzzer.toneHz) Hz is outside 20...20000 Hz"))
        }
        if let chip = buzzer.pwmChip {
            if buzzer.type != .passive {
                p.append(ConfigProblem(Self.at(path, \.wiring.buzzer, \.pwmChip), "only a passive buzzer uses PWM (set type: passive)"))
            }
            if chip < 0 { p.append(ConfigProblem(Self.at(path, \.wiring.buzzer, \.pwmChip), "must be 0 or more")) }
        }
        if buzzer.pwmChannel < 0 { p.append(ConfigProblem(Self.at(path, \.wiring.buzzer, \.pwmChannel), "must be 0 or more")) }
        return p
    }
}

// The parts' keys; their checks are the section's (lines may not be shared).

extension BuzzerWiring: KeyedSection {
    public init() { self.init(line: "GPIO18", type: .active, toneHz: 2000, pwmChip: nil, pwmChannel: 0, activeLow: false) }

    public static var keys: [ConfigKey<Self>] {
        [.custom("line", \.line, read: decodeLine), .word("type", \.type, BuzzerTypeWords.self), .value("tone-hz", \.toneHz),
         .optional("pwm-chip", \.pwmChip), .value("pwm-channel", \.pwmChannel), .value("active-low", \.activeLow)]
    }
}

extension ButtonWiring: KeyedSection {
    public init() { self.init(line: "GPIO17", bias: .pullUp, activeLow: true) }

    public static var keys: [ConfigKey<Self>] {
        [.custom("line", \.line, read: decodeLine), .word("bias", \.bias, BiasWords.self), .value("active-low", \.activeLow)]
    }
}

extension LEDWiring: KeyedSection {
    /// An LED has no default line: `line` is required.
    public init() { self.init(line: "", activeLow: GPIOSection.ledActiveLowDefault) }

    public static var keys: [ConfigKey<Self>] {
        [.custom("line", \.line) { c, k in
             guard let line = try decodeLine(c, k) else {
                 throw DecodingError.keyNotFound(k, .init(codingPath: c.codingPath, debugDescription: "the LED needs a line"))
             }
             return line
         },
         .value("active-low", \.activeLow)]
    }
}

/// A line given as a name (`GPIO17`) or as an offset (`17`, string or number).
private func decodeLine<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> String? {
    if let n = try? c.decodeIfPresent(Int.self, forKey: key) { return String(n) }
    return try c.decodeIfPresent(String.self, forKey: key)
}

enum BuzzerTypeWords: WordList {
    static var words: [(word: String, value: BuzzerWiring.Kind)] { GPIOSection.buzzerTypes.map { ($0.word, $0.type) } }
}

package enum BiasWords: WordList {
    package static var words: [(word: String, value: LineBias)] { GPIOSection.biases.map { ($0.word, $0.bias) } }
}
