import ArgumentParser
import FallGuardDaemon
import FallGuardCore
import FallGuardNotify
import Foundation

/// `fallguard outbox-run`: opens the outbox in a state directory, optionally enqueues
/// synthetic fall alerts while the delivery worker runs, and delivers until nothing is pending.
/// Crash tests and benches run it, kill it with SIGKILL, and run it again: pending deliveries
/// resume.
struct OutboxRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox-run",
        abstract: "Deliver the outbox in a state directory (crash tests and benches).",
        shouldDisplay: false
    )

    @OptionGroup var settingsOptions: NotifySettingsOptions

    @Option(name: .long, help: ArgumentHelp("Folder of outbox.sqlite.", valueName: "dir"))
    var stateDir: String

    @Option(name: .long, help: "Enqueue this many synthetic fall alerts.")
    var enqueue = 0

    @Option(name: .long, help: "Milliseconds between two enqueued alerts.")
    var intervalMs = 0.0

    @Option(name: .long, help: ArgumentHelp("Append `key unix-time` (when enqueue began) for every enqueued delivery.", valueName: "path"))
    var enqueueLog: String?

    @Option(name: .long, help: ArgumentHelp("Go through a countdown of this many milliseconds for each alert, as the alarm does: arm it (committed, held), then deliver it at expiry (released).", valueName: "ms"))
    var countdownMs = 0.0

    @Flag(name: .long, help: "Print the commit latencies (p50, p99, max) in milliseconds.")
    var latency = false

    @Flag(name: .long, help: "Only enqueue; do not deliver.")
    var noDelivery = false

    func validate() throws {
        try requireOption("enqueue", enqueue, in: 0...1_000_000)
        try requireOption("interval-ms", intervalMs, in: 0...60_000)
        try requireOption("countdown-ms", countdownMs, in: 0...600_000)
    }

    func run() throws {
        let settings = try settingsOptions.load()
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let outbox = try Outbox(path: stateDir + "/" + Outbox.fileName, settings: settings)
        let producer = AlertProducer(outbox: outbox, count: enqueue, intervalMs: intervalMs, countdownMs: countdownMs, logPath: enqueueLog)
        if noDelivery {
            producer.run()
        } else {
            try runBlocking {
                try await withChannelContext { context in
                    let worker = DeliveryWorker(outbox: outbox, channels: try settings.makeChannels(context: context))
                    // The alarm controller's thread in the daemon: enqueue is synchronous.
                    Thread.detachNewThread { producer.run() }
                    await worker.run(untilDrained: true, producing: { !producer.finished })
                }
            }
        }
        if let error = producer.error { throw error }
        if latency { producer.latencySummary.forEach { print($0) } }
        print("outbox: \(try outbox.metrics())")
    }
}

/// Enqueues numbered synthetic fall alerts, timing each commit; with a countdown, arms each
/// alert, waits for its expiry and delivers it, as ``AlarmController`` does.
// @unchecked: the figures are written by `run()` on its own thread and read only once `finished`.
final class AlertProducer: @unchecked Sendable {
    let outbox: Outbox
    let count: Int
    let intervalMs: Double
    let countdownMs: Double
    let logPath: String?
    private let lock = NSLock()
    private var done = false
    /// Milliseconds of each enqueue commit (no countdown) or arm commit (countdown).
    private(set) var latencies: [Double] = []
    /// With a countdown: milliseconds from expiry until the alert was durable (0 when it already was).
    private(set) var expiryToDurable: [Double] = []
    /// With a countdown: milliseconds of the release at expiry.
    private(set) var releases: [Double] = []
    private(set) var error: (any Error)?

    init(outbox: Outbox, count: Int, intervalMs: Double, countdownMs: Double = 0, logPath: String?) {
        (self.outbox, self.count, self.intervalMs, self.countdownMs, self.logPath) = (outbox, count, intervalMs, countdownMs, logPath)
    }

    var finished: Bool { lock.withLock { done } }

    func run() {
        defer { lock.withLock { done = true } }
        let run = "\(getpid())-\(Int(Date().timeIntervalSince1970))"
        do {
            var log: FileHandle?
            if let logPath {
                if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
                log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
                try log?.seekToEnd()
            }
            defer { try? log?.close() }
            for i in 0..<count {
                let alert = Alert(kind: .fall, incident: "RUN-\(run)-\(i)", time: Double(i))
                var t = Date().timeIntervalSince1970
                let start = DispatchTime.now().uptimeNanoseconds
                let keys: [String]
                if countdownMs > 0 {
                    try outbox.arm(alert, fallback: countdownMs / 1000 + 7.13)
                    let durable = DispatchTime.now().uptimeNanoseconds
                    latencies.append(Double(durable - start) / 1e6)
                    let expiry = start + UInt64(countdownMs * 1e6)
                    while DispatchTime.now().uptimeNanoseconds < expiry {
                        usleep(UInt32(max(1, (expiry - min(expiry, DispatchTime.now().uptimeNanoseconds)) / 1000)))
                    }
                    let expired = DispatchTime.now().uptimeNanoseconds
                    expiryToDurable.append(Double(durable > expiry ? durable - expiry : 0) / 1e6)
                    t = Date().timeIntervalSince1970
                    try outbox.deliver(alert)
                    releases.append(Double(DispatchTime.now().uptimeNanoseconds - expired) / 1e6)
                    keys = try outbox.deliveries(incident: alert.incident).map(\.idempotencyKey)
                } else {
                    keys = try outbox.enqueue(alert, test: false)
                    latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                }
                // After the commit: a key in the log is a key the outbox holds.
                try log?.write(contentsOf: Data(keys.map { "\($0) \(String(format: "%.6f", t))\n" }.joined().utf8))
                if intervalMs > 0 { usleep(UInt32(intervalMs * 1000)) }
            }
        } catch {
            self.error = error
        }
    }

    /// `enqueue-latency-ms n=… p50=… p99=… max=…` (or `arm-commit-ms`, `expiry-to-durable-ms`,
    /// `release-ms` with a countdown).
    var latencySummary: [String] {
        func line(_ name: String, _ values: [Double]) -> String? {
            guard !values.isEmpty else { return nil }
            let s = values.sorted()
            func q(_ p: Double) -> Double { s[min(s.count - 1, Int((Double(s.count) * p).rounded(.up)) - 1)] }
            return "\(name) " + String(format: "n=%d p50=%.3f p99=%.3f max=%.3f", s.count, q(0.5), q(0.99), s.last!)
        }
        if countdownMs > 0 {
            return [line("arm-commit-ms", latencies), line("expiry-to-durable-ms", expiryToDurable),
                    line("release-ms", releases)].compactMap { $0 }
        }
        return [line("enqueue-latency-ms", latencies)].compactMap { $0 }
    }
}
