import Atomics
import Dispatch
import FallGuardCore
import FallGuardFieldTest
import FallGuardHardware
import FallGuardNotify
import Foundation
import Logging
import Synchronization

/// What the bridge keeps for field tests while it protects, on a thread of its own so that a
/// slow SD card never delays detection: every incident's signal and record in the archive
/// (`<state>/incidents/<ID>/`), and with `recording.enabled` the 40 Hz stream the detector sees
/// in hourly compressed files. The sensor thread hands samples over through a lock-free ring
/// (``tap(_:)``, never blocks; what does not fit is counted as dropped), the alarm thread its
/// incident events (``record(_:)``).
public final class FieldRecorder: Sendable {
    /// What the status shows of the recorder.
    public struct Status: Sendable, Equatable, Codable {
        /// The recording file being written (nil with recording off).
        public var file: String?
        /// Compressed bytes written since start.
        public var bytes: Int64
        /// Samples that never reached the recording: the ring was full, or the disk refused them.
        public var dropped: Int
        /// Incidents archived since start.
        public var incidents: Int
    }

    public let archive: IncidentArchive
    let recordingFolder: String?
    /// The state directory, which must be the daemon's own for recordings inside it.
    let stateDirectory: String
    let keepBytes: Int64
    let flushInterval: Double
    let before: Double, after: Double
    private let samples = SPSCRingBuffer<AccelerationSample>(minimumCapacity: 4096)
    private let mailbox = Mutex<[IncidentEvent]>([])
    private let detector: Mutex<IncidentRecord.DetectorInfo>
    private let deliveries: @Sendable (String) -> Deliveries?
    /// Incidents whose deliveries changed since the recorder thread last looked.
    private let changed = Mutex<Set<String>>([])
    private let shown = Mutex(Status(file: nil, bytes: 0, dropped: 0, incidents: 0))
    private let trouble = Mutex<[String: String]>([:])
    private let stopping = ManagedAtomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger

    public init(stateDirectory: String, recordingFolder: String?, keepBytes: Int64, flushInterval: Double,
                before: Double, after: Double, detector: IncidentRecord.DetectorInfo, logger: Logger,
                deliveries: @escaping @Sendable (String) -> Deliveries?) {
        archive = IncidentArchive(folder: IncidentArchive.folder(inState: stateDirectory))
        self.stateDirectory = stateDirectory
        (self.recordingFolder, self.keepBytes, self.flushInterval) = (recordingFolder, keepBytes, flushInterval)
        (self.before, self.after) = (before, after)
        self.detector = Mutex(detector)
        self.deliveries = deliveries
        self.logger = logger
    }

    /// Sensor thread: one 40 Hz sample as the detector saw it. Never blocks.
    public func tap(_ s: AccelerationSample) { _ = samples.push(s) }

    /// Alarm thread: the incident log's events, in order.
    public func record(_ events: [IncidentEvent]) {
        guard !events.isEmpty else { return }
        mailbox.withLock { $0.append(contentsOf: events) }
        wake.signal()   // an incident's lead-up is taken from memory at once
    }

    /// An incident's deliveries as the outbox has them, and whether every one has ended.
    public struct Deliveries: Sendable, Equatable {
        public var list: [IncidentRecord.Delivery]
        /// Sent, failed, cancelled or quarantined, each of them: nothing more will change.
        public var settled: Bool

        public init(list: [IncidentRecord.Delivery], settled: Bool) { (self.list, self.settled) = (list, settled) }
    }

    /// `incident`'s deliveries in `outbox` (nil when it cannot be read).
    public static func deliveries(of incident: String, in outbox: Outbox) -> Deliveries? {
        guard let rows = try? outbox.deliveries(incident: incident) else { return nil }
        return Deliveries(list: rows.map {
            IncidentRecord.Delivery(channel: $0.channel, to: $0.delivery.recipient?.name, state: $0.state.rawValue,
                                    attempts: $0.attempts, error: $0.lastError)
        }, settled: rows.allSatisfy { $0.state.hasEnded })
    }

    /// Progress service: a delivery of `incident` changed (sent, failed, answered): its record
    /// is written again at once.
    public func deliveriesChanged(incident: String) {
        changed.withLock { _ = $0.insert(incident) }
        wake.signal()
    }

    /// The detector the next incidents are archived with (a reload changed it).
    public func detectorChanged(_ info: IncidentRecord.DetectorInfo) { detector.withLock { $0 = info } }

    public var status: Status {
        var s = shown.withLock { $0 }
        s.dropped += samples.overruns
        return s
    }

    /// Why the recording or the archive cannot be written, one line each; empty when all is well.
    public var problems: [String] { trouble.withLock { t in t.keys.sorted().map { t[$0]! } } }

    public func start() {
        let thread = Thread { [self] in
            defer { finished.signal() }
            // The kernel's name for the thread (top -H, /proc/PID/task/*/comm): Foundation's
            // `name` does not reach it on Linux.
            _ = try? "fg-recorder".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            loop()
        }
        thread.name = "fallguard-recorder"
        thread.start()
    }

    /// Stops the thread: what it holds is written first (the recording flushed, open incident
    /// windows written as far as they go).
    public func stopAndWait() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
    }

    // MARK: - The recorder thread

    private func loop() {
        var signal = IncidentSignalBuffer(before: before, after: after)
        let writer = recordingFolder.map { folder in
            RecordingWriter(directory: folder, keepBytes: keepBytes,
                            within: folder.hasPrefix(stateDirectory + "/") ? stateDirectory : nil)
        }
        var records: [String: IncidentRecord] = [:]
        var lastFlush = monotonic(), lastSignalWrite = monotonic()
        var settled: Set<String> = []
        var droppedByDisk = 0
        var pausedUntil = 0.0
        while true {
            let stop = stopping.load(ordering: .acquiring)
            let offset = Date().timeIntervalSince1970 - monotonic()   // wall clock minus stream clock
            let paused = monotonic() < pausedUntil
            samples.drain { s in
                for done in signal.append(s) { writeSignal(done, offset: offset, records: &records) }
                guard let writer else { return }
                guard !paused else { droppedByDisk += 1; return }
                do throws(RecordingWriteError) {
                    try writer.append(s, wallTime: s.time + offset)
                } catch {
                    droppedByDisk += 1
                    recordingFailed(error, pausedUntil: &pausedUntil)
                }
            }
            var refresh = changed.withLock { c in defer { c.removeAll() }; return c }
            for e in mailbox.withLock({ m in defer { m.removeAll() }; return m }) {
                apply(e, offset: offset, records: &records, signal: &signal)
                if let id = e.incident { refresh.insert(id) }
            }
            let now = monotonic()
            if let writer, stop || now - lastFlush >= flushInterval {
                lastFlush = now
                let rows = writer.pendingRows
                if !paused {
                    do throws(RecordingWriteError) { try writer.flush(); if rows > 0 { clear("recording") } } catch {
                        droppedByDisk += rows
                        recordingFailed(error, pausedUntil: &pausedUntil)
                    }
                }
                shown.withLock { $0.file = writer.currentPath; $0.bytes = writer.bytesWritten; $0.dropped = droppedByDisk }
            }
            if stop || now - lastSignalWrite >= flushInterval {
                lastSignalWrite = now
                // Windows still filling are written as they go: a power cut keeps what came before it.
                for w in signal.pending { writeSignal(w, offset: offset, records: &records) }
            }
            refreshDeliveries(stop ? Set(records.keys) : refresh, &records, settled: &settled, now: now)
            if stop {
                for done in signal.finishAll() { writeSignal(done, offset: offset, records: &records) }
                try? writer?.close()
                return
            }
            _ = wake.wait(timeout: .now() + 1)   // the sample ring holds 100 s at 40 Hz, 1.7 s at 60x
        }
    }

    /// After a write error the recording rests for ``retryAfter`` seconds (samples dropped and
    /// counted), then tries a new file: a full or failing disk costs one attempt, not 40 a second.
    private func recordingFailed(_ error: RecordingWriteError, pausedUntil: inout Double) {
        pausedUntil = monotonic() + Self.retryAfter
        report("recording", "the recording cannot be written: \(error); samples are dropped until it can (monitoring goes on)")
    }

    static let retryAfter = 10.0

    /// One problem for the archive, whichever of its files failed (the file goes to the log once).
    private func archiveFailed(_ error: any Error) {
        let reason = (error as? ArchiveError).map { String(cString: strerror($0.code)) } ?? "\(error)"
        report("archive", "the incident archive cannot be written in \(archive.folder): \(reason)")
    }

    private func apply(_ e: IncidentEvent, offset: Double, records: inout [String: IncidentRecord],
                       signal: inout IncidentSignalBuffer) {
        guard let id = e.incident else { return }
        let wall = iso8601(secondsSince1970: e.time + offset)
        if var r = records[id] ?? (try? archive.record(id)) {
            r.apply(e, wallTime: wall)
            save(r, into: &records)
        } else if let r = IncidentRecord.begun(by: e, wallTime: wall, before: before, after: after,
                                               detector: detector.withLock { $0 }) {
            var r = r
            r.eventWallTime = iso8601(secondsSince1970: r.eventTime + offset)
            r.clockSynchronized = SystemClock.synchronized()
            signal.begin(id, eventTime: r.eventTime)
            save(r, into: &records)
            // The lead-up at once: it is what a field tester most needs, and it is in memory only.
            if let w = signal.pending.first(where: { $0.id == id }) { writeSignal(w, offset: offset, records: &records) }
            shown.withLock { $0.incidents += 1 }
        }
    }

    private func writeSignal(_ done: IncidentSignalBuffer.Window, offset: Double, records: inout [String: IncidentRecord]) {
        // The gyroscope's columns when every sample has them (a sensor changed mid-window keeps three).
        let sixAxis = !done.samples.isEmpty && done.samples.allSatisfy { $0.gyro != nil }
        var text = (sixAxis ? Recording.sixAxisHeader : Recording.timedHeader) + "\n"
        if let first = done.samples.first {
            text += RecordingWriter.anchor(streamTime: first.time, wallTime: first.time + offset) + "\n"
        }
        for s in done.samples { text += Recording.row(sixAxis ? s : s.accelerometerOnly) + "\n" }
        do {
            try archive.writeSignal(text, of: done.id)
            clear("archive")
        } catch {
            archiveFailed(error)
        }
    }

    /// The deliveries of `ids` from the outbox, a record written again when they changed; then
    /// incidents whose messages all ended, closed a while ago, are no longer followed.
    private func refreshDeliveries(_ ids: Set<String>, _ records: inout [String: IncidentRecord], settled: inout Set<String>,
                                   now: Double) {
        for id in ids {
            guard var r = records[id] else { continue }
            let d = deliveries(id)
            if d?.list != r.deliveries {
                r.deliveries = d?.list
                save(r, into: &records)
            }
            if d?.settled ?? true { settled.insert(id) } else { settled.remove(id) }
        }
        for id in settled {
            guard let r = records[id] else { settled.remove(id); continue }
            if r.outcome != "open", r.timeline.last.map({ now - $0.t > 2 * after }) ?? true {
                records[id] = nil
                settled.remove(id)
            }
        }
    }

    private func save(_ r: IncidentRecord, into records: inout [String: IncidentRecord]) {
        var r = r
        // A tester may have labelled the incident (`fallguard label`) since the last write:
        // their labels are kept beside the wearer's, in the order they were set.
        if let disk = try? archive.record(r.id) { r.labels = IncidentLabelEntry.merged(r.labels, disk.labels) }
        records[r.id] = r
        do { try archive.write(r); clear("archive") } catch {
            archiveFailed(error)
        }
    }

    private func report(_ part: String, _ message: String) {
        let new = trouble.withLock { t in defer { t[part] = message }; return t[part] == nil }
        if new { logger.error("\(message)") }
    }

    private func clear(_ part: String) {
        let was = trouble.withLock { t in defer { t[part] = nil }; return t[part] }
        if was != nil { logger.notice("\(part): written again") }
    }

    private func monotonic() -> Double { MonotonicClock.seconds() }
}
