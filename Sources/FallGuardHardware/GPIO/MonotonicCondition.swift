import Foundation
import Synchronization

/// A mutex and condition variable that time out at an absolute CLOCK_MONOTONIC instant, so a
/// thread sleeping until the next pattern edge or alarm deadline is immune to wall-clock steps.
final class MonotonicCondition: @unchecked Sendable {
    // @unchecked: the pthread objects are used only through lock/wait/signal.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Call with the lock held: waits for a signal or until `deadline` (ns), nil = no limit.
    func wait(until deadline: Int64?) {
        guard let deadline else {
            pthread_cond_wait(cond, mutex)
            return
        }
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        _ = pthread_cond_timedwait(cond, mutex, &ts)
    }

    func signal() { pthread_cond_signal(cond) }
}

/// Whether the alarm's threads got the real-time priority they ask for.
public enum RealTimePriority {
    /// The error of the last refused request (e.g. `Operation not permitted` without
    /// `LimitRTPRIO=` or under a seccomp filter that forbids `sched_setscheduler`); nil when
    /// every request so far succeeded.
    public static var refusal: String? { refused.withLock { $0 } }

    static let refused = Mutex<String?>(nil)
}

/// Starts a named thread, asking for a modest real-time priority (SCHED_FIFO 10) so buzzer
/// edges and button events stay on time on a loaded machine; without the privilege it runs
/// at normal priority, and ``RealTimePriority/refusal`` says why.
func startThread(name: String, realTime: Bool, _ body: @escaping @Sendable () -> Void) -> Thread {
    let t = Thread {
        if realTime {
            var p = sched_param(sched_priority: 10)
            let error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p)
            if error != 0 { RealTimePriority.refused.withLock { $0 = String(cString: strerror(error)) } }
        }
        body()
    }
    t.name = name
    t.stackSize = 1 << 20
    t.start()
    return t
}
