import ArgumentParser
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

    @Flag(name: .long, help: "Print the enqueue commit latency (p50, p99, max) in milliseconds.")
    var latency = false

    @Flag(name: .long, help: "Only enqueue; do not deliver.")
    var noDelivery = false

    func run() throws {
        let settings = try settingsOptions.load()
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let outbox = try Outbox(path: stateDir + "/" + Outbox.fileName, settings: settings)
        let producer = AlertProducer(outbox: outbox, count: enqueue, intervalMs: intervalMs, logPath: enqueueLog)
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
        if latency, let line = producer.latencySummary { print(line) }
        print("outbox: \(try outbox.metrics())")
    }
}

/// Enqueues numbered synthetic fall alerts, timing each commit.
final class AlertProducer: @unchecked Sendable {
    let outbox: Outbox
    let count: Int
    let intervalMs: Double
    let logPath: String?
    private let lock = NSLock()
    private var done = false
    private(set) var latencies: [Double] = []
    private(set) var error: (any Error)?

    init(outbox: Outbox, count: Int, intervalMs: Double, logPath: String?) {
        self.outbox = outbox
        self.count = count
        self.intervalMs = intervalMs
        self.logPath = logPath
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
                let t = Date().timeIntervalSince1970
                let start = DispatchTime.now().uptimeNanoseconds
                let keys = try outbox.enqueue(Alert(kind: .fall, incident: "RUN-\(run)-\(i)", time: Double(i)), test: false)
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                // After the commit: a key in the log is a key the outbox holds.
                try log?.write(contentsOf: Data(keys.map { "\($0) \(String(format: "%.6f", t))\n" }.joined().utf8))
                if intervalMs > 0 { usleep(UInt32(intervalMs * 1000)) }
            }
        } catch {
            self.error = error
        }
    }

    /// `enqueue-latency-ms n=… p50=… p99=… max=…`.
    var latencySummary: String? {
        guard !latencies.isEmpty else { return nil }
        let s = latencies.sorted()
        func q(_ p: Double) -> Double { s[min(s.count - 1, Int((Double(s.count) * p).rounded(.up)) - 1)] }
        return String(format: "enqueue-latency-ms n=%d p50=%.3f p99=%.3f max=%.3f", s.count, q(0.5), q(0.99), s.last!)
    }
}
