import Dispatch
import FallGuardCore
import Synchronization
import Testing
import FallGuardTestSupport

@Suite struct SPSCRingBufferTests {
    @Test func roundsCapacityUpToAPowerOfTwo() {
        #expect(SPSCRingBuffer<Int>(minimumCapacity: 1).capacity == 2)
        #expect(SPSCRingBuffer<Int>(minimumCapacity: 100).capacity == 128)
        #expect(SPSCRingBuffer<Int>(minimumCapacity: 128).capacity == 128)
    }

    @Test func isFirstInFirstOutAndCountsOverruns() {
        let ring = SPSCRingBuffer<Int>(minimumCapacity: 4)
        for i in 0..<4 { #expect(ring.push(i)) }
        #expect(!ring.push(99), "a full buffer refuses instead of overwriting")
        #expect(ring.overruns == 1)
        #expect(ring.count == 4)
        #expect(ring.pop() == 0)
        #expect(ring.push(4))
        var seen: [Int] = []
        ring.drain { seen.append($0) }
        #expect(seen == [1, 2, 3, 4])
        #expect(ring.pop() == nil)
        #expect(ring.pushed == 5)
    }

    @Test func drainRespectsItsMaximum() {
        let ring = SPSCRingBuffer<Int>(minimumCapacity: 8)
        for i in 0..<6 { ring.push(i) }
        var seen: [Int] = []
        #expect(ring.drain(maximum: 4) { seen.append($0) } == 4)
        #expect(seen == [0, 1, 2, 3])
        #expect(ring.count == 2)
    }

    @Test func releasesElementsItStillHolds() {
        final class Token { nonisolated(unsafe) static var alive = 0; init() { Token.alive += 1 }; deinit { Token.alive -= 1 } }
        do {
            let ring = SPSCRingBuffer<Token>(minimumCapacity: 4)
            ring.push(Token()); ring.push(Token()); ring.push(Token())
            _ = ring.pop()
            #expect(Token.alive == 2)
        }
        #expect(Token.alive == 0)
    }

    /// Two real threads: every sample arrives exactly once and in order, or is counted as an overrun.
    @Test(arguments: [16, 1024])
    func twoThreadsLoseNothingSilently(capacity: Int) {
        let ring = SPSCRingBuffer<AccelerationSample>(minimumCapacity: capacity)
        let total = 300_000
        let group = DispatchGroup()
        nonisolated(unsafe) var received: [Int] = []
        received.reserveCapacity(total)
        let done = ManagedFlag()
        DispatchQueue.global().async(group: group) {
            for i in 0..<total {
                ring.push(AccelerationSample(time: Double(i), x: Double(i), y: -Double(i), z: 0))
            }
            done.set()
        }
        DispatchQueue.global().async(group: group) {
            while true {
                let finished = done.isSet
                let n = ring.drain { s in
                    precondition(s.x == s.time && s.y == -s.time, "torn sample")
                    received.append(Int(s.time))
                }
                if n == 0 && finished && ring.count == 0 { break }
            }
        }
        group.wait()
        // No duplicates, no reordering: strictly increasing. No silent loss: received + overruns = total.
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
        #expect(received.count + ring.overruns == total)
        #expect(ring.pushed == received.count)
        if capacity == 1024 { #expect(received.count > 0) }
    }
}

/// A flag set by one thread and read by another.
final class ManagedFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}
