import ArgumentParser
import FallGuardCore
import FallGuardNotify
import Foundation

/// `fallguard outbox-run`: opens the outbox in a state directory, optionally enqueues
/// synthetic fall alerts, and delivers until nothing is pending. Crash tests and benches run
/// it, kill it with SIGKILL, and run it again: pending deliveries resume.
struct OutboxRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox-run",
        abstract: "Deliver the outbox in a state directory (crash tests and benches).",
        shouldDisplay: false
    )

    @OptionGroup var settingsOptions: NotifySettingsOptions

    @Option(name: .long, help: ArgumentHelp("Folder of outbox.sqlite.", valueName: "dir"))
    var stateDir: String

    @Option(name: .long, help: "Enqueue this many synthetic fall alerts first.")
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
        let run = "\(getpid())-\(Int(Date().timeIntervalSince1970))"
        var log = enqueueLog.flatMap { FileHandle(forWritingAtPath: $0) ?? (FileManager.default.createFile(atPath: $0, contents: nil) ? FileHandle(forWritingAtPath: $0) : nil) }
        _ = try log?.seekToEnd()
        var latencies: [Double] = []
        for i in 0..<enqueue {
            let t = Date().timeIntervalSince1970
            let start = DispatchTime.now().uptimeNanoseconds
            let keys = try outbox.enqueue(Alert(kind: .fall, incident: "RUN-\(run)-\(i)", time: Double(i)), test: false)
            let end = DispatchTime.now().uptimeNanoseconds
            latencies.append(Double(end - start) / 1e6)
            log?.write(Data(keys.map { "\($0) \(String(format: "%.6f", t))\n" }.joined().utf8))
            if intervalMs > 0 { usleep(UInt32(intervalMs * 1000)) }
        }
        try log?.close()
        log = nil
        if latency && !latencies.isEmpty {
            let s = latencies.sorted()
            func q(_ p: Double) -> Double { s[min(s.count - 1, Int((Double(s.count) * p).rounded(.up)) - 1)] }
            print(String(format: "enqueue-latency-ms n=%d p50=%.3f p99=%.3f max=%.3f", s.count, q(0.5), q(0.99), s.last!))
        }
        if noDelivery { return }
        try runBlocking {
            try await withChannelContext { context in
                let worker = DeliveryWorker(outbox: outbox, channels: try settings.makeChannels(context: context))
                await worker.run(untilDrained: true)
            }
        }
        print("outbox: \(try outbox.metrics())")
    }
}
