import Dispatch
import Foundation

/// Polls `condition` every 50 ms until it holds or `seconds` pass; returns whether it held.
public func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}

/// ``eventually(_:_:)`` for async tests: sleeps between polls instead of blocking the thread.
public func until(_ seconds: Double = 120, _ condition: () throws -> Bool) async rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try condition()
}

/// Runs blocking work (waiting for a process) off the cooperative pool.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in DispatchQueue.global().async { c.resume(returning: body()) } }
}
