import FallGuardConfigKeys
import FallGuardEmail

extension ConfigCheck {
    /// An address the e-mail channel will send to: its own check, so that what passes here
    /// is never refused at send time.
    static func email(_ s: String, at path: [String]) -> [ConfigProblem] {
        EmailAddress.isValid(s) ? [] : [ConfigProblem(path, "'\(s)' is not an e-mail address")]
    }
}
