import FallGuardConfig

/// Any bytes as the configuration file, as `check-config` loads it: a configuration and its
/// diagnostics, each with a message, and never a trap. A fixed environment, so `${NAME}`
/// expands the same way on every run.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let yaml = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let (_, diagnostics) = DaemonConfiguration.load(
        yaml: yaml, path: "/nonexistent/fallguard-fuzz/config.yaml", environment: environment)
    for d in diagnostics { precondition(!d.problem.message.isEmpty) }
    return 0
}

// As ExampleFileTests and FuzzCorpusTests give it: the example reads Twilio from it.
let environment = ["TWILIO_ACCOUNT_SID": "AC0", "TWILIO_AUTH_TOKEN": "t"]
