import FallGuardCore
import FallGuardHardware
import Foundation
import Testing
import FallGuardTestSupport

@Suite struct SensorAffinityTests {
    /// `Cpus_allowed_list` of the calling thread, from the kernel.
    static func allowed() -> String {
        let status = (try? String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
            .map { $0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces) } ?? "?"
    }

    /// Runs `body` on a new thread and returns what it returned.
    static func onThread(_ body: @escaping @Sendable () -> (String?, String)) -> (String?, String) {
        nonisolated(unsafe) var result: (String?, String) = (nil, "")
        let done = DispatchSemaphore(value: 0)
        Thread { result = body(); done.signal() }.start()
        done.wait()
        return result
    }

    @Test func theThreadIsPinnedToTheChosenCPUAndOnlyThatThread() {
        let before = Self.allowed()
        let last = SensorCPU.online - 1
        let (error, after) = Self.onThread { (SensorCPU.last.pinCurrentThread(), Self.allowed()) }
        #expect(error == nil)
        #expect(after == String(last))
        let (_, zero) = Self.onThread { (SensorCPU.number(0).pinCurrentThread(), Self.allowed()) }
        #expect(zero == "0")
        #expect(Self.allowed() == before, "the calling thread is untouched")
        let (none, free) = Self.onThread { (SensorCPU.any.pinCurrentThread(), Self.allowed()) }
        #expect(none == nil && free == before)
    }

    @Test func aCPUThatDoesNotExistIsRefusedWithAReason() {
        let (error, after) = Self.onThread { (SensorCPU.number(SensorCPU.online + 500).pinCurrentThread(), Self.allowed()) }
        #expect(error?.contains("CPU \(SensorCPU.online + 500)") == true, "\(error ?? "nil")")
        #expect(after == Self.allowed())
    }

    @Test func lastAndAnyResolveAgainstTheOnlineCPUs() {
        // The words of `sensor.cpu` are the configuration tests' (SensorSectionTests).
        #expect(SensorCPU.last.resolved(online: 4) == 3 && SensorCPU.last.resolved(online: 1) == 0)
        #expect(SensorCPU.any.resolved(online: 4) == nil)
        #expect(SensorCPU.number(2).resolved(online: 4) == 2)
    }
}
