import FallGuardCore
import Foundation

/// Plays ``OnOffPattern``s on a ``LevelOutput`` from a dedicated thread. Edge times come from
/// ``PatternSequencer`` as absolute CLOCK_MONOTONIC instants and the thread sleeps until each
/// one, so patterns never drift. ``play(_:oneShot:)`` may be called from any thread; a new
/// pattern takes effect at once (the thread is woken), except behind a one-shot still playing.
public final class PatternPlayer: @unchecked Sendable {
    // @unchecked: `sequencer`, `pending`, `running` and the handlers are guarded by `condition`.
    public let name: String
    private let output: any LevelOutput
    private let condition = MonotonicCondition()
    private var sequencer = PatternSequencer()
    private var pending: [(OnOffPattern, Bool, Int64)] = []
    private var running = true
    private var level = false
    private let done = DispatchSemaphore(value: 0)
    private var changeHandler: (@Sendable (Bool, Int64) -> Void)?
    private var errorHandler: (@Sendable (GPIOError) -> Void)?

    /// Called on the player thread after each level change, with its time (console display).
    public var onChange: (@Sendable (Bool, Int64) -> Void)? {
        get { condition.withLock { changeHandler } }
        set { condition.withLock { changeHandler = newValue } }
    }

    /// Called on the player thread when setting the output fails (the player keeps going).
    public var onError: (@Sendable (GPIOError) -> Void)? {
        get { condition.withLock { errorHandler } }
        set { condition.withLock { errorHandler = newValue } }
    }

    public init(name: String, output: any LevelOutput) {
        self.name = name
        self.output = output
        _ = startThread(name: "fallguard-\(name)", realTime: true) { [self] in loop() }
    }

    /// Plays `pattern` from now (or after the one-shot under way).
    public func play(_ pattern: OnOffPattern, oneShot: Bool = false) {
        let now = MonotonicClock.nanoseconds()
        condition.withLock {
            pending.append((pattern, oneShot, now))
            condition.signal()
        }
    }

    /// Switches off, stops the thread and shuts the output down; waits for it.
    public func stop() {
        let wasRunning = condition.withLock { () -> Bool in
            defer { running = false; condition.signal() }
            return running
        }
        if wasRunning {
            done.wait()
            output.shutdown()
        }
    }

    private func loop() {
        defer { done.signal() }
        while true {
            var changes: [(Bool, Int64)] = []
            let keepRunning = condition.withLock { () -> Bool in
                if pending.isEmpty, running {
                    condition.wait(until: sequencer.nextChange()?.time)
                }
                for (p, oneShot, t) in pending {
                    if let l = sequencer.play(p, oneShot: oneShot, at: t) { changes.append((l, t)) }
                }
                pending.removeAll()
                let now = MonotonicClock.nanoseconds()
                while let next = sequencer.nextChange(), next.time <= now {
                    sequencer.advance(to: next.time)
                    changes.append((next.on, next.time))
                }
                return running
            }
            guard keepRunning else { break }
            // Only the final level matters when several edges came due at once (after a stall).
            if let last = changes.last, last.0 != level {
                level = last.0
                do { try output.set(level) } catch { onError?(error) }
                onChange?(level, MonotonicClock.nanoseconds())
            }
        }
        if level { try? output.set(false); onChange?(false, MonotonicClock.nanoseconds()) }
    }
}
