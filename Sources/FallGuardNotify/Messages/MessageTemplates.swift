import FallGuardCore

/// The text of each kind of message. A template may use `{wearer}`, `{time}`, `{incident}`,
/// `{reason}`, `{location}`, `{device}`, `{by}`, `{fault}`, `{walked}` (a sentence when the
/// wearer walked during the countdown, else nothing) and `{after}` (a recovered fall: how long
/// after the fall the wearer was up again, e.g. `12 s`); kinds without an override keep the
/// built-in text.
public struct MessageTemplates: Sendable, Equatable {
    /// The placeholders a template may use.
    public static let placeholders = ["wearer", "time", "incident", "reason", "location", "device", "by", "fault", "walked", "after"]

    /// The built-in body for each kind.
    public static let builtIn: [AlertKind: String] = [
        .fall: "FALL ALERT: {wearer} may have fallen at {time} and did not cancel the alarm.{walked} Please check on them now. Location: {location}. Detector: {reason}. Incident {incident}.",
        .helpRequested: "HELP REQUEST: {wearer} pressed the help button at {time}. Please check on them now. Location: {location}. Incident {incident}.",
        .recoveredFall: "{wearer} fell and got up again by themselves {after} later ({time}). No alarm was raised, but please check on them soon: a fall is a warning sign. Location: {location}. Incident {incident}.",
        .resolvedByWearer: "All clear: {wearer} pressed \"I'm OK\" at {time}: false alarm. Incident {incident}.",
        .acknowledged: "{by} is handling incident {incident} for {wearer} (acknowledged at {time}).",
        .deviceProblem: "FallGuard for {wearer} cannot detect falls since {time}: {fault}. Please check the device. Incident {incident}.",
        .deviceRecovered: "FallGuard for {wearer} works again since {time}. Incident {incident}.",
        .heartbeat: "FallGuard is watching over {wearer} ({time}): monitoring is on.",
    ]

    /// The built-in body of a device-problem alert about a device nobody wears
    /// (``SensorProblem/notWorn``), and of its device-recovered counterpart.
    public static let notWornProblem = "FallGuard for {wearer} is not being worn ({fault}): falls cannot be detected until it is worn again. Please check on {wearer} and the device ({time}). Incident {incident}."
    public static let wornAgain = "FallGuard for {wearer} is worn again since {time}: falls are detected again. Incident {incident}."

    /// The built-in body of a device-problem alert about storage (``SensorProblem/storage``):
    /// falls are still detected, so it must not say they are not.
    public static let storageProblem = "FallGuard for {wearer} cannot store its alerts since {time}: {fault}. Falls are still detected and alerts sent. Please check the device's SD card. Incident {incident}."

    /// The built-in bodies of the power watch's device-problem alerts (``PowerWatch``): falls
    /// are still detected while the battery lasts, so they must not say they are not.
    public static let batteryLow = "FallGuard for {wearer} has a low battery since {time}: {fault}. Falls are still detected; please charge it or restore its power. Incident {incident}."
    public static let shuttingDown = "FallGuard for {wearer} is about to stop at {time}: its battery is nearly empty ({fault}). Falls will not be detected until it has power again. Please check on {wearer}. Incident {incident}."
    public static let onBattery = "FallGuard for {wearer} lost its mains power and runs on its battery since {time}: {fault}. Falls are still detected while the battery lasts. Incident {incident}."
    public static let mainsBack = "FallGuard for {wearer} has its mains power back since {time}. Incident {incident}."

    /// The built-in subject (one line) for each kind.
    public static let subjects: [AlertKind: String] = [
        .fall: "Fall alert: {wearer}", .helpRequested: "Help request: {wearer}", .recoveredFall: "Fell and got up again: {wearer}",
        .resolvedByWearer: "All clear: {wearer}", .acknowledged: "Alert taken by {by}: {wearer}",
        .deviceProblem: "Device problem: {wearer}'s fall detector", .deviceRecovered: "Device working again: {wearer}",
        .heartbeat: "Monitoring is on: {wearer}",
    ]

    /// Overrides by kind.
    public var bodies: [AlertKind: String]
    /// The longest body in characters (306: two GSM-7 SMS segments; a body with other
    /// characters gets 134, two UCS-2 segments). Longer bodies are shortened: the detector's
    /// reason first, then the location.
    public var smsLimit: Int

    public init(bodies: [AlertKind: String] = [:], smsLimit: Int = 306) { (self.bodies, self.smsLimit) = (bodies, smsLimit) }

    /// The names between braces in `text`.
    public static func placeholderNames(in text: String) -> [String] {
        var names: [String] = []
        var current: String?
        for ch in text {
            if ch == "{" { current = "" } else if ch == "}", let c = current { names.append(c); current = nil } else { current?.append(ch) }
        }
        return names
    }
}
