import FallGuardConfig
import FallGuardCore

/// The notifier sections (wearer, contacts, channels, policy). Filled in with the notifiers.
struct NotifySections: Sendable {
    static let demo = NotifySections()

    static func read(from doc: inout ConfigDocument) -> NotifySections { NotifySections() }
}
