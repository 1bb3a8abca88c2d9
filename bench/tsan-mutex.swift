import Synchronization
import Foundation
// Two threads increment one counter only inside Mutex.withLock: race-free by construction.
final class Box: @unchecked Sendable { let m = Mutex<[Int]>([0]) }
let box = Box()
let n = 200_000
let t1 = Thread { for _ in 0..<n { box.m.withLock { $0[0] += 1 } } }
let t2 = Thread { for _ in 0..<n { box.m.withLock { $0[0] += 1 } } }
t1.start(); t2.start()
while box.m.withLock({ $0[0] }) < 2 * n { usleep(1000) }
print("count", box.m.withLock { $0[0] }, "of", 2 * n)
