import FallGuardCore
import FallGuardTestSupport

extension AlertConfiguration {
    /// The tests' engine settings: the product's timings (the configuration module's defaults)
    /// unless a test gives others.
    static func testing(countdown: Double = 30, longPress: Double = 2, finalPhase: Double = 10,
                        activeTimeout: Double = 3600, sensorFaultGrace: Double = 60,
                        autoCancelWhenWalking: Bool = false,
                        incidentPrefix: String = "FG") throws(AlertConfigurationError) -> AlertConfiguration {
        try AlertConfiguration(countdown: countdown, longPress: longPress, finalPhase: finalPhase, activeTimeout: activeTimeout,
                               sensorFaultGrace: sensorFaultGrace, autoCancelWhenWalking: autoCancelWhenWalking,
                               incidentPrefix: incidentPrefix)
    }

    /// ``testing(countdown:longPress:finalPhase:activeTimeout:sensorFaultGrace:autoCancelWhenWalking:incidentPrefix:)``
    /// with every value as given there.
    static let standard: AlertConfiguration = {
        do { return try testing() } catch { preconditionFailure("\(error)") }
    }()
}

extension AlertEngine {
    /// An engine with the tests' standard settings.
    init() { self.init(configuration: .standard) }
}
