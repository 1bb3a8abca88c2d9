import FallGuardConfig
import FallGuardCore
@testable import FallGuardDaemon
import FallGuardFieldTest
import FallGuardHardware
import FallGuardTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The wear watch on real recordings, through the alarm as the daemon assembles it
/// (`LocalAlarm`, no outputs), the alerts caught as the console sink writes them.
@Suite(.serialized) struct WearWatchTests {
    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func alerts() -> [Alert] {
            let decoder = JSONDecoder()
            return all.withLock { $0 }.compactMap { line in
                struct Line: Decodable { var alert: Alert }
                return try? decoder.decode(Line.self, from: Data(line.utf8)).alert
            }
        }
    }

    static func alarm(_ section: AlarmSection, log: IncidentLog? = nil) throws -> (LocalAlarm, Lines) {
        let lines = Lines()
        let local = try LocalAlarm(alarm: section, gpio: .defaults, outputs: .none,
                                   sink: ConsoleAlertSink(write: { l in lines.all.withLock { $0.append(l) } }),
                                   incidentLog: log, logger: Logger(label: "test.wear"))
        return (local, lines)
    }

    /// A recording as the detector sees it: resampled to 40 Hz.
    static func stream(_ path: String) throws -> [AccelerationSample] {
        var out: [AccelerationSample] = []
        _ = DetectorRunner.detections(in: try RecordingFile.read(path: path).samples, configuration: try DetectorConfiguration()) { s, _ in out.append(s) }
        return out
    }

    /// U06 exp2: the phone set down on a table at about 541 s and picked up at about 600 s.
    /// With the shortest not-worn alert (a minute, which the engine allows and the file does
    /// not), the helpers are told, then told again that it is worn.
    @Test func aPhoneLyingOnATableIsToldToTheHelpersAndWornAgainWhenPickedUp() async throws {
        var section = AlarmSection.defaults
        section.notWornAlert = 60
        let (local, lines) = try Self.alarm(section)
        let controller = local.controller
        controller.start()
        defer { controller.stop() }
        let watch = WearWatch(alarm: controller, notWornAlert: 60)
        var notWornSeen = false
        for s in try Self.stream(dailyFixtureFolder + "/U06-exp2-530-642s.csv") {
            watch.process(s)
            if !notWornSeen, s.time > 605, await until(3, { controller.snapshot.notWorn != nil || !lines.alerts().isEmpty }) {
                notWornSeen = true
            }
        }
        #expect(notWornSeen, "not worn by 605 s")
        #expect(await until(5) { lines.alerts().count == 2 }, "\(lines.all.withLock { $0 })")
        let alerts = lines.alerts()
        #expect(alerts.map(\.kind) == [.deviceProblem, .deviceRecovered])
        #expect(alerts.allSatisfy { $0.sensorFault?.problem == .notWorn && $0.incident == "FG-fault-1" })
        #expect(controller.snapshot.notWorn == nil, "worn again")
    }

    /// SisFall F13 SA06 R01 (a faint from a chair) then D01 SA08 R01 (walking slowly): the
    /// countdown of the fall hears the steps. Without auto-cancel they are noted and the alert
    /// says so; with it the countdown ends as a false alarm and nothing is sent.
    @Test(arguments: [false, true])
    func walkingDuringTheCountdownReachesTheAlarm(autoCancel: Bool) async throws {
        var section = AlarmSection.defaults
        (section.countdown, section.finalPhase, section.autoCancelWhenWalking) = (8, 0, autoCancel)
        let dir = TempDirectory("wear")
        let log = try IncidentLog(stateDirectory: dir.path)
        let (local, lines) = try Self.alarm(section, log: log)
        local.start()
        defer { local.stop() }
        let watch = WearWatch(alarm: local.controller, notWornAlert: nil)
        let fall = try Self.stream(fixtureFolder + "/F13_SA06_R01.csv")
        let walk = try Self.stream(fixtureFolder + "/D01_SA08_R01.csv")
        var detector = try DetectorConfiguration().makeDetector()
        for s in fall {
            watch.process(s)
            if let d = detector.process(s) { local.controller.fallSuspected(d) }
        }
        #expect(await until(3) { local.controller.snapshot.status == .countdown }, "the faint starts the countdown")
        for s in walk.prefix(200) { watch.process(s) }   // 5 s of steps, fed at once
        if autoCancel {
            #expect(await until(3) { local.controller.snapshot.status == .monitoring })
            #expect(await until(3) { log.lines().contains { $0.contains("\"auto-cancelled\"") } }, "\(log.lines())")
            try await Task.sleep(for: .seconds(9))
            #expect(lines.alerts().isEmpty, "cancelled as a false alarm: nothing sent")
        } else {
            #expect(await until(12) { !lines.alerts().isEmpty })
            let alert = try #require(lines.alerts().first)
            #expect(alert.kind == .fall && alert.wearerResumedWalking, "\(alert)")
            #expect(log.lines().contains { $0.contains("\"wearer-walking\"") }, "\(log.lines())")
        }
    }
}
