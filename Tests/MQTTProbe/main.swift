// fallguard-mqtt-probe: runs one MQTT channel in its own process so that tests can kill it
// with SIGKILL and watch the broker publish its last will. Prints each acknowledgement as
// `ack <incident> <by>`; a line `stop` on standard input stops it cleanly (availability
// `offline`), end of input or a signal ends it like a crash.
//
//   fallguard-mqtt-probe --port 1883 --device kitchen [--host H] [--prefix P]
//                        [--username U --password P] [--state alert-out] [--bench N]
//
// With --bench N it sends N alerts one after the other, prints the publish-to-PUBACK times
// (`p50_ms=… p99_ms=… max_ms=…`) and exits (bench/mqtt-alert-latency.sh).
import Dispatch
import FallGuardConfig
import FallGuardCore
import FallGuardMQTT
import FallGuardNotify
import Foundation

var settings = MQTTChannelSettings()
var state: AlarmStatus?
var bench = 0
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
    case "--state": state = AlarmStatus(rawValue: value)
    case "--bench": bench = Int(value) ?? 0
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

if bench > 0 {
    var millis: [Double] = []
    let clock = ContinuousClock()
    for i in 0..<bench {
        let payload = AlertPayload(idempotencyKey: "bench-\(i)", test: true, device: settings.effectiveDevice,
                                   wearer: Wearer(name: "Bench"), alert: Alert(kind: .fall, incident: "FG-\(i)", time: 0),
                                   message: RenderedMessage(subject: "bench", body: "bench"), sentAt: "1970-01-01T00:00:00Z")
        let start = clock.now
        _ = try await channel.send(Delivery(channel: "mqtt", recipient: nil, payload: payload))
        let d = clock.now - start
        millis.append(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
    }
    millis.sort()
    let p = { (q: Double) in millis[min(millis.count - 1, Int(q * Double(millis.count)))] }
    print(String(format: "alerts=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f", bench, p(0.5), p(0.99), millis.last!))
    await channel.stop()
    exit(0)
}
print("started")
fflush(nil)
while let line = readLine() {
    guard line == "stop" else { continue }
    await channel.stop()
    exit(0)
}
