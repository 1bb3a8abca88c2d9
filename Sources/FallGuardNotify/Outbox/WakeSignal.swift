import Foundation

/// Wakes the delivery worker: when an alert is enqueued, a send finishes, or a time comes.
/// A signal sent while nobody waits is kept for the next wait.
final class WakeSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var generation = 0

    func signal() {
        lock.lock()
        if let w = waiter {
            waiter = nil
            lock.unlock()
            w.resume()
        } else {
            pending = true
            lock.unlock()
        }
    }

    /// Returns on a signal, after `seconds` (nil: only on a signal), or when the task is cancelled.
    func wait(seconds: Double?) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                lock.lock()
                if pending {
                    pending = false
                    lock.unlock()
                    c.resume()
                    return
                }
                waiter = c
                generation += 1
                let mine = generation
                lock.unlock()
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
        lock.lock()
        guard mine == generation, let w = waiter else { lock.unlock(); return }
        waiter = nil
        lock.unlock()
        w.resume()
    }
}
