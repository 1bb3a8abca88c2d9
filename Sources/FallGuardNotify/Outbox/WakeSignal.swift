import Foundation
import Synchronization

/// Wakes the delivery worker: when an alert is enqueued, a send finishes, or a time comes.
/// A signal sent while nobody waits is kept for the next wait.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let w = s.waiter else {
                s.pending = true
                return nil
            }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Returns on a signal, after `seconds` (nil: only on a signal), or when the task is cancelled.
    func wait(seconds: Double?) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let mine = state.withLock { s -> Int? in
                    if s.pending {
                        s.pending = false
                        return nil
                    }
                    s.waiter = c
                    s.generation += 1
                    return s.generation
                }
                guard let mine else { return c.resume() }
                if let seconds {
                    DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [weak self] in
                        self?.expire(mine)
                    }
                }
            }
        } onCancel: {
            signal()
        }
    }

    private func expire(_ mine: Int) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard mine == s.generation, let w = s.waiter else { return nil }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }
}
