/// A named buzzer pattern. The hardware layer maps each name to GPIO on/off timings; the
/// engine only says which pattern should be playing.
///
/// Most patterns are continuous: they repeat until the next `.sound` effect replaces them.
/// The ``isOneShot`` ones play once; the engine always follows a one-shot with the continuous
/// pattern to return to, in the same effect list, and the buzzer should finish the one-shot
/// before it starts that next pattern.
public enum AlarmSound: String, Sendable, Equatable, Codable, CaseIterable {
    /// Nothing.
    case silent
    /// A fall is suspected and the countdown runs: press the button to abort.
    case countdown
    /// The last seconds of the countdown (``AlertConfiguration/finalPhase``): faster, louder.
    case countdownFinal = "countdown-final"
    /// The alert is being sent; calmer than the countdown. A press says "I'm OK".
    case alertActive = "alert-active"
    /// A message of the alert went out: calmer still, so the wearer hears that it was sent.
    case alertDelivered = "alert-delivered"
    /// One-shot: the long press was taken and the help request went out.
    case helpRequested = "help-requested"
    /// The sensor is faulty and no incident is running: falls cannot be detected.
    case sensorFault = "sensor-fault"
    /// One-shot: a short confirmation chirp (abort taken, "I'm OK" taken).
    case acknowledge
    /// One-shot: a caregiver acknowledged the alarm: help is coming.
    case helpComing = "help-coming"

    /// Plays once instead of repeating.
    public var isOneShot: Bool { self == .acknowledge || self == .helpRequested || self == .helpComing }
}

/// What the status LED shows.
public enum StatusIndicator: String, Sendable, Equatable, Codable, CaseIterable {
    /// Slow heartbeat: watching, all well.
    case monitoring
    /// Fast blink: a countdown runs.
    case countdown
    /// Steady: an alert is being sent and not yet resolved.
    case alertOut = "alert-out"
    /// Slow blink: a message of the alert went out; nobody has acknowledged yet.
    case alertDelivered = "alert-delivered"
    /// The sensor is faulty. Takes precedence over the incident patterns while the fault lasts
    /// (the buzzer tells the wearer about the incident; the LED tells about the device).
    case fault
}
