import Atomics

/// A lock-free single-producer / single-consumer ring buffer.
///
/// The producer (the sensor thread) never blocks, never allocates and never waits for the
/// consumer: when the buffer is full, the new element is dropped and counted in
/// ``overruns``, so a stalled consumer shows up as a number instead of a stalled sensor.
/// The consumer (the detector) takes elements in order.
///
/// Exactly one thread may call ``push(_:)`` and exactly one thread may call ``pop()`` /
/// ``drain(maximum:_:)``; any thread may read the counters.
// The hot methods are @inlinable so the sensor thread and the consumer get them specialized
// for their element type across modules (no generic metadata look-ups per sample).
public final class SPSCRingBuffer<Element>: @unchecked Sendable {
    // Sendable: `storage` slots are handed over through the acquire/release pair on
    // `head` (producer publishes) and `tail` (consumer frees); no slot is touched by both
    // sides at once.
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    @usableFromInline let mask: Int
    /// Total elements ever pushed (next slot to write is head & mask).
    @usableFromInline let head = ManagedAtomic<Int>(0)
    /// Total elements ever popped.
    @usableFromInline let tail = ManagedAtomic<Int>(0)
    @usableFromInline let overrunCount = ManagedAtomic<Int>(0)

    /// Usable slots: a power of two.
    public let capacity: Int

    /// - Parameter minimumCapacity: rounded up to a power of two (at least 2).
    public init(minimumCapacity: Int) {
        precondition(minimumCapacity > 0, "ring buffer capacity must be positive")
        var c = 2
        while c < minimumCapacity { c <<= 1 }
        capacity = c
        mask = c - 1
        storage = .allocate(capacity: c)
    }

    deinit {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .relaxed)
        for i in t..<h { (storage + (i & mask)).deinitialize(count: 1) }
        storage.deallocate()
    }

    /// Producer side. Returns `false` (and counts an overrun) when the buffer is full.
    @inlinable @discardableResult
    public func push(_ element: Element) -> Bool {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        if h - t >= capacity {
            overrunCount.wrappingIncrement(ordering: .relaxed)
            return false
        }
        (storage + (h & mask)).initialize(to: element)
        head.store(h + 1, ordering: .releasing)
        return true
    }

    /// Consumer side: the oldest element, or `nil` when empty.
    @inlinable
    public func pop() -> Element? {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        if t == h { return nil }
        let element = (storage + (t & mask)).move()
        tail.store(t + 1, ordering: .releasing)
        return element
    }

    /// Consumer side: hands up to `maximum` elements, oldest first, to `body`; returns how many.
    @inlinable @discardableResult
    public func drain(maximum: Int = .max, _ body: (Element) throws -> Void) rethrows -> Int {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        let n = min(h - t, maximum)
        var i = 0
        defer { if i > 0 { tail.store(t + i, ordering: .releasing) } }
        while i < n {
            let element = (storage + ((t + i) & mask)).move()
            i += 1
            try body(element)
        }
        return n
    }

    /// Elements waiting for the consumer (a snapshot).
    public var count: Int {
        let t = tail.load(ordering: .acquiring)
        return head.load(ordering: .acquiring) - t
    }

    /// Elements the producer dropped because the buffer was full.
    public var overruns: Int { overrunCount.load(ordering: .relaxed) }

    /// Elements ever accepted by ``push(_:)``.
    public var pushed: Int { head.load(ordering: .acquiring) }
}
