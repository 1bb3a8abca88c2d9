// fallguard-mqtt-probe: runs one MQTT channel in its own process so that tests can kill it
// with SIGKILL and watch the broker publish its last will. Prints each acknowledgement as
// `ack <incident> <by>`; a line `stop` on standard input stops it cleanly (availability
// `offline`), end of input or a signal ends it like a crash.
//
//   fallguard-mqtt-probe --port 1883 --device kitchen [--host H] [--prefix P]
//                        [--username U --password P] [--state alert-out]
import Dispatch
import FallGuardCore
import FallGuardMQTT
import Foundation

var settings = MQTTChannelSettings()
var state: StatusIndicator?
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fatalError("\(flag) needs a value") }
    switch flag {
    case "--host": settings.host = value
    case "--port": settings.port = Int(value)
    case "--device": settings.device = value
    case "--prefix": settings.topicPrefix = value
    case "--username": settings.username = value
    case "--password": settings.password = value
    case "--state": state = StatusIndicator(rawValue: value)
    default: fatalError("unknown option \(flag)")
    }
}
if let problem = settings.problems(at: ["mqtt"]).first(where: { $0.severity == .error }) {
    fatalError("\(problem)")
}

let channel = try MQTTChannel(settings: settings, onAcknowledgement: { incident, by in
    print("ack \(incident) \(by)")
    fflush(nil)
})
channel.start()
if let state { channel.publish(state: state) }

print("started")
fflush(nil)
while let line = readLine() {
    guard line == "stop" else { continue }
    await channel.stop()
    exit(0)
}
