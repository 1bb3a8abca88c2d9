import FallGuardMQTT

/// Any bytes as an MQTT acknowledgement payload: an acknowledgement within the documented
/// limits, or an MQTTAcknowledgementError that says why not; then the gate (with and without a
/// secret) takes it or says why not, never traps.
let gates = [MQTTAcknowledgementGate(device: "fuzz", secret: nil),
             MQTTAcknowledgementGate(device: "fuzz", secret: "0123456789abcdef-fuzz")]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAcknowledgement(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let payload = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let ack = try MQTTAcknowledgement(payload: payload)
        if let incident = ack.incident {
            precondition(!incident.isEmpty && incident.unicodeScalars.count <= 64)
        }
        if let by = ack.by { precondition(!by.isEmpty && by.unicodeScalars.count <= 100) }
        for gate in gates {
            if case .failure(let why) = gate.incident(of: ack) { precondition(!why.description.isEmpty) }
        }
    } catch {
        precondition(!error.description.isEmpty)
    }
    return 0
}
