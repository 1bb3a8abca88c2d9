import FallGuardCore
import Foundation
import Synchronization

/// The buzzer, LED and button as wired, requested through a ``GPIOBackend``: what
/// ``AlarmController`` needs. Any missing or busy line throws before anything sounds, naming
/// chip and line; the lines are released when the players and the button are stopped.
public struct GPIOAlarmParts: Sendable {
    public let buzzer: PatternPlayer
    public let led: PatternPlayer?
    public let button: AbortButton
    /// The libgpiod in use (nil with a test double).
    public let library: GPIOLibraryInfo?

    /// `backend`: the libgpiod ``GPIOLibrary/load(_:)`` chose, or a test double.
    public init(gpio: GPIOWiring, button timings: ButtonTimings, backend: any GPIOBackend) throws(GPIOError) {
        library = backend.library
        let chip = try backend.openChip(gpio.chip)
        let buzzerLine = try chip.requestOutput(line: gpio.buzzer.line, consumer: gpio.consumer,
                                                activeLow: gpio.buzzer.activeLow, initiallyActive: false)
        let ledLine = try gpio.led.map { (l) throws(GPIOError) in
            try chip.requestOutput(line: l.line, consumer: gpio.consumer, activeLow: l.activeLow, initiallyActive: false)
        }
        let buttonLine = try chip.requestEdges(line: gpio.button.line, consumer: gpio.consumer,
                                               bias: gpio.button.bias, activeLow: gpio.button.activeLow,
                                               debounceMicroseconds: UInt32(clamping: timings.debounceMs * 1000))
        let output: any LevelOutput
        switch (gpio.buzzer.type, gpio.buzzer.pwmChip) {
        case (.active, _): output = LineOutput(buzzerLine)
        case let (.passive, pwm?): output = try PWMTone(chip: pwm, channel: gpio.buzzer.pwmChannel, frequency: gpio.buzzer.toneHz)
        case (.passive, nil): output = ToggledTone(buzzerLine, frequency: gpio.buzzer.toneHz)
        }
        button = try AbortButton(line: buttonLine, timings: timings)
        buzzer = PatternPlayer(name: "buzzer", output: output)
        led = ledLine.map { PatternPlayer(name: "led", output: LineOutput($0)) }
    }
}

/// A level shown on the console instead of a pin (the no-hardware demo's buzzer and LED).
public final class ConsoleLevel: LevelOutput, Sendable {
    private let on = Atomic<Bool>(false)
    public init() {}
    public func set(_ on: Bool) throws(GPIOError) { self.on.store(on, ordering: .relaxed) }
    public var isOn: Bool { on.load(ordering: .relaxed) }
}
