import FallGuardCore
import FallGuardTestSupport

extension AlertConfiguration {
    /// The tests' engine settings: the product's timings (the configuration module's defaults)
    /// unless a test gives others.
    static func testing(countdown: Double = 30, longPress: Double = 2, finalPhase: Double = 10,
                        alertTimeout: Double = 3600, faultGrace: Double = 60,
                        autoCancelWhenWalking: Bool = false,
                        incidentPrefix: String = "FG", recoveredFall: Bool = true) throws(AlertConfigurationError) -> AlertConfiguration {
        try AlertConfiguration(countdown: countdown, longPress: longPress, finalPhase: finalPhase, alertTimeout: alertTimeout,
                               faultGrace: faultGrace, autoCancelWhenWalking: autoCancelWhenWalking,
                               incidentPrefix: incidentPrefix, recoveredFall: recoveredFall)
    }

    /// ``testing(countdown:longPress:finalPhase:alertTimeout:faultGrace:autoCancelWhenWalking:incidentPrefix:)``
    /// with every value as given there.
    static let standard: AlertConfiguration = {
        do { return try testing() } catch { preconditionFailure("\(error)") }
    }()
}

extension AlertEngine {
    /// An engine with the tests' standard settings.
    init() { self.init(configuration: .standard) }
}
