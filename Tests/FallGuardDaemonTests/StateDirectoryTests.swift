import FallGuardConfig
import FallGuardCore
import FallGuardDaemon
import FallGuardHardware
import FallGuardTestSupport
import Foundation
@testable import FallGuardNotify
import Logging
import Prometheus
import Testing

/// Issue 28: a state directory that cannot be written at start, or that the daemon must not
/// use, never stops monitoring. The daemon runs as on a read-only disk (alerts held in memory
/// and sent directly through the channels), says why, and takes the disk back when it can.
@Suite(.serialized) struct StateDirectoryTests {
    static func fallAlerts(_ dir: TempDirectory) -> [[String: Any]] { InProcessDaemonTests.fallAlerts(dir) }

    /// The outbox cannot be opened at start (here a folder stands where the file goes, which
    /// stops root as a read-only file stops the service user): `Daemon.init` used to throw
    /// (exit 73, and systemd restarted it in a loop). Now the fall alert goes out directly, the
    /// problem is shown, and once the file can be made the held alert is stored as sent.
    @Test func anOutboxThatCannotBeOpenedAtStartStillGetsTheFallAlertOut() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        try FileManager.default.createDirectory(atPath: dir.path + "/state/outbox.sqlite", withIntermediateDirectories: true)
        let daemon = try InProcessDaemonTests.daemon(in: dir, gpio: InMemoryGPIO())
        #expect(daemon.problems.contains { $0.contains("the outbox cannot be opened") }, "\(daemon.problems)")
        let run = Task { try await daemon.run(duration: 40) }
        defer { run.cancel() }
        #expect(await until(25) { Self.fallAlerts(dir).count == 1 }, "the fall alert goes out directly through the exec channel")
        #expect(daemon.alarm.snapshot.status == .alertOut, "monitoring goes on: the alarm took the fall")
        // The helpers are told once, honestly: falls are still detected.
        let problems = InProcessDaemonTests.alerts(dir).filter { ($0["alert"] as? [String: Any])?["kind"] as? String == "device-problem" }
        let body = ((problems.first?["message"] as? [String: Any])?["body"] as? String) ?? ""
        #expect(problems.count == 1 && body.contains("cannot store its alerts") && body.contains("Falls are still detected"), "\(problems)")
        let status = try DaemonStatus.read(from: dir.path + "/state")
        #expect(status.problems?.contains { $0.contains("the outbox cannot be opened") } == true, "\(status.problems ?? [])")
        let key = (Self.fallAlerts(dir).first?["idempotencyKey"] as? String) ?? "none"
        try FileManager.default.removeItem(atPath: dir.path + "/state/outbox.sqlite")
        #expect(await until(8) { (try? DaemonStatus.read(from: dir.path + "/state"))?.problems == [] }, "healthy again once the file opens")
        let rows = try daemon.notifiers.outbox.deliveries().filter { $0.delivery.payload.alert.kind == .fall }
        #expect(rows.map(\.idempotencyKey) == [key] && rows.allSatisfy { $0.state == .sent }, "\(rows)")
        try await Task.sleep(for: .seconds(2))
        #expect(Self.fallAlerts(dir).count == 1, "not sent twice")
    }

    /// Issue 38 item 3: reading the health (the status service, the page and `problems` read it
    /// every second) writes nothing; the health service's once-a-second pass makes a state
    /// directory that went missing again. (Reading used to make it: `StateFiles.prepare` in a getter.)
    @Test func readingTheProblemsWritesNothingTheHealthServiceRepairs() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        let daemon = try InProcessDaemonTests.daemon(in: dir, gpio: InMemoryGPIO())
        let state = dir.path + "/state"
        #expect(daemon.problems == [], "\(daemon.problems)")
        try FileManager.default.removeItem(atPath: state)
        for _ in 0..<5 { _ = daemon.problems }
        #expect(!FileManager.default.fileExists(atPath: state), "a read made the state directory again")
        let run = Task { try await daemon.run(duration: 20) }
        defer { run.cancel() }
        #expect(await until(5) { FileManager.default.fileExists(atPath: state) }, "the health service makes it again")
    }

    /// A state directory another user owns and anyone may write (0777, `nobody`), with links
    /// planted in it: the daemon (root here) writes nothing in it and nothing through the
    /// links, leaves its owner and mode alone, still gets the fall alert out and says why.
    @Test func aStateDirectoryAnotherUserCanWriteIsNotUsedAndItsLinksAreNotFollowed() async throws {
        let dir = TempDirectory("daemon")
        defer { umask(0o022) }
        let state = dir.path + "/state", outside = dir.path + "/outside"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try "mine\n".write(toFile: outside + "/victim", atomically: false, encoding: .utf8)
        for (name, target) in [("incidents.jsonl", "victim"), ("status.json.tmp", "victim"), ("outbox.sqlite", "db"),
                               ("incidents", "folder")] {
            #expect(symlink(outside + "/" + target, state + "/" + name) == 0)
        }
        try FileManager.default.createDirectory(atPath: outside + "/folder", withIntermediateDirectories: true)
        #expect(chown(state, 65534, 65534) == 0 && chmod(state, 0o777) == 0)
        let daemon = try InProcessDaemonTests.daemon(in: dir, gpio: InMemoryGPIO())
        #expect(daemon.problems.first?.contains("state directory not used") == true, "\(daemon.problems)")
        #expect(daemon.problems.first?.contains("owned by uid 65534") == true, "\(daemon.problems)")
        let run = Task { try await daemon.run(duration: 40) }
        defer { run.cancel() }
        #expect(await until(25) { Self.fallAlerts(dir).count == 1 }, "the fall alert still goes out")
        try await Task.sleep(for: .seconds(2))
        #expect(try String(contentsOfFile: outside + "/victim", encoding: .utf8) == "mine\n", "nothing written through a link")
        #expect(!FileManager.default.fileExists(atPath: outside + "/db"), "no database made at a dangling link's target")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside + "/folder") == [], "nothing in a linked folder")
        #expect(!FileManager.default.fileExists(atPath: state + "/status.json"))
        let attributes = try FileManager.default.attributesOfItem(atPath: state)
        #expect((attributes[.posixPermissions] as? Int) == 0o777 && (attributes[.ownerAccountID] as? Int) == 65534,
                "another user's folder is left as it is: \(attributes)")
        #expect(daemon.problems.contains { $0.contains("state directory not used") }, "\(daemon.problems)")
    }
}
