import FallGuardMQTT

/// Any bytes as an MQTT acknowledgement payload: an acknowledgement within the documented
/// limits, or an MQTTAcknowledgementError that says why not.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAcknowledgement(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let payload = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let ack = try MQTTAcknowledgement(payload: payload)
        if let incident = ack.incident {
            precondition(!incident.isEmpty && incident.unicodeScalars.count <= 64)
        }
        precondition(!ack.by.isEmpty && ack.by.unicodeScalars.count <= 100)
    } catch {
        precondition(!error.description.isEmpty)
    }
    return 0
}
