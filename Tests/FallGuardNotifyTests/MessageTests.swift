import FallGuardCore
import Foundation
import Testing
@testable import FallGuardNotify

/// What the wearer did and whether the device was worn, in the helpers' words (issue 26).
@Suite struct WearerMessageTests {
    let renderer = MessageRenderer(templates: MessageTemplates(), wearer: Wearer(name: "Margaret", location: "Flat 3"),
                                   device: "bridge", timeZone: TimeZone(identifier: "Europe/London")!)
    let date = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func aFallAlertSaysWhenTheWearerWalkedDuringTheCountdown() {
        var alert = fallAlert("FG-7")
        #expect(!renderer.render(alert, at: date, test: false).body.contains("walked"))
        alert.wearerResumedWalking = true
        let body = renderer.render(alert, at: date, test: false).body
        #expect(body.contains("did not cancel the alarm. They walked again during the countdown. Please check"), "\(body)")
    }

    @Test func aDeviceNobodyWearsIsNotCalledAFaultySensor() {
        let fault = SensorFault(.notWorn, device: "the wearer's device", detail: "only the sensor's own noise for 60 min")
        let problem = renderer.render(Alert(kind: .deviceProblem, incident: "FG-fault-2", time: 0, sensorFault: fault), at: date, test: false)
        #expect(problem.body.contains("Margaret is not being worn") && problem.body.contains("falls cannot be detected until it is worn again"), "\(problem.body)")
        #expect(problem.body.contains("60 min") && problem.body.contains("FG-fault-2"))
        let worn = renderer.render(Alert(kind: .deviceRecovered, incident: "FG-fault-2", time: 0, sensorFault: fault), at: date, test: false)
        #expect(worn.body.contains("is worn again") && !worn.body.contains("cannot"), "\(worn.body)")
        let io = SensorFault(.ioError, device: "iio:device0", detail: "EIO")
        #expect(renderer.render(Alert(kind: .deviceProblem, incident: "FG-fault-3", time: 0, sensorFault: io), at: date, test: false)
            .body.contains("cannot detect falls"))
    }
}
