import FallGuardCore
import FallGuardFieldTest
import FallGuardNotify
import Foundation

/// What `fallguard status` shows: written by the running daemon to `<state>/status.json` once a
/// second (write to a temporary file, then rename, so a reader never sees half a file).
public struct DaemonStatus: Codable, Sendable, Equatable {
    public struct Sensor: Codable, Sendable, Equatable {
        public var device: String
        public var uri: String
        public var mode: String
        /// Hz the device runs at.
        public var rate: Double
        /// Active problems: stalled, stuck, saturated, implausible, io-error, disappeared.
        public var problems: [String]
        public var samples: Int
        public var overruns: Int
        /// The sensor's gyroscope is read with its accelerometer (six axes, the MPU6050), or it
        /// has none (three axes, the ADXL345); nil from an older daemon.
        public var gyroscope: Bool? = nil
        /// The same in words: `six axes (accelerometer + gyroscope)` or `three axes (accelerometer only)`.
        public var axes: String? = nil
    }

    public struct Incident: Codable, Sendable, Equatable {
        public var id: String
        public var kind: String
        /// Wall-clock time, ISO 8601.
        public var at: String
        /// Who acknowledged it and how (`Anna (SMS reply)`), for an `acknowledged` incident.
        public var acknowledgedBy: String?
        /// A message of the alarm went out (nil before, and for other kinds).
        public var delivered: Bool?
        /// Who answered the alarm's call.
        public var reachedBy: String?
        /// After a station's acknowledgement, presence at the bedside (issue 37): by a long press
        /// of the button (who accepted), or "I'm here" at the station (who took it), and when (ISO 8601).
        public var presentBy: String?
        public var presentAt: String?
        /// The station's reset of that call (done): who, and when (ISO 8601).
        public var resetBy: String?
        public var resetAt: String?

        public init(id: String, kind: String, at: String, acknowledgedBy: String? = nil, delivered: Bool? = nil,
                    reachedBy: String? = nil) {
            (self.id, self.kind, self.at) = (id, kind, at)
            (self.acknowledgedBy, self.delivered, self.reachedBy) = (acknowledgedBy, delivered, reachedBy)
        }
    }

    public struct Outbox: Codable, Sendable, Equatable {
        public var pending: Int
        public var sent: Int
        public var failed: Int
        /// Seconds the oldest pending delivery has waited; nil when none is pending.
        public var oldestPendingAge: Double?
        /// Rows that could not be read, set aside (nil from an older daemon).
        public var quarantined: Int?
        /// Alerts the outbox could not take, held in memory and sent directly (nil from an older daemon).
        public var heldInMemory: Int?
    }

    public var pid: Int32
    public var version: String
    /// Wall-clock times, ISO 8601.
    public var started: String
    public var updated: String
    /// Milliseconds from exec (or, after `swift run`, from the command's start) until monitoring
    /// began; nil until then. What
    /// benches and scripts wait for (under systemd, `READY=1` says the same).
    public var readyMs: Int?
    /// ``AlarmStatus``: monitoring, countdown, alert-out, or sensor-fault.
    public var state: String
    /// The incident in progress, if any.
    public var incident: String?
    /// Seconds left in a running countdown.
    public var countdownRemaining: Double?
    public var sensor: Sensor?
    public var lastIncident: Incident?
    public var outbox: Outbox?
    /// Path of the configuration in use, or "embedded demo".
    public var configuration: String
    /// What keeps alerts from reaching people or the record from being kept, one line each
    /// (the outbox cannot take alerts, the incident log cannot be written, a stalled thread);
    /// empty when all is well, nil from an older daemon.
    public var problems: [String]?
    /// The libgpiod the buzzer, LED and button go through, e.g. `libgpiod 2.1.3 (libgpiod.so.3,
    /// uAPI v2)`; nil without GPIO (console) or from an older daemon.
    public var gpio: String?
    /// The incident archive and the continuous recording: file, bytes, dropped samples.
    public var recording: FieldRecorder.Status?
    /// Set while the device is not worn (only the sensor's own noise for minutes: it lies
    /// somewhere, and falls cannot be detected); nil while it is worn or from an older daemon.
    public var notWorn: NotWorn?

    /// Whether the wall clock is synchronised (the kernel's `adjtimex`: what `timedatectl`'s
    /// NTPSynchronized reads) and its last step; nil from an older daemon.
    public var clock: Clock?

    public struct Clock: Codable, Sendable, Equatable {
        /// nil: the kernel did not say.
        public var synchronized: Bool?
        /// The last step of the wall clock seen while running (seconds, + forward), and when.
        public var lastStepSeconds: Double?
        public var lastStepAt: String?
    }

    /// The battery and the mains (`power:`); nil without a battery or an external supply
    /// (nothing claimed), with `power.enabled: false`, or from an older daemon.
    public var power: Power?

    public struct Power: Codable, Sendable, Equatable {
        public struct Battery: Codable, Sendable, Equatable {
            public var name: String
            /// Percent; nil when the gauge gives none.
            public var capacity: Int?
            /// The driver's word: Charging, Discharging, Full, Not charging, Unknown.
            public var status: String
        }
        public var batteries: [Battery]
        /// Whether the mains feeds the device; nil when nothing says.
        public var mainsOnline: Bool?
        /// When the mains went, ISO 8601, once "on battery" was told.
        public var onBatterySince: String?
        /// "battery low" was told and the battery has not risen above it again.
        public var batteryLow: Bool
        /// "shutting down" was told.
        public var shuttingDown: Bool
    }

    /// The cellular modem of the `modem` channels (ModemManager); nil without one.
    public var modem: Modem?

    public struct Modem: Codable, Sendable, Equatable {
        /// ModemManager's word (`registered`, `searching`, `locked`, `failed`, …), or
        /// `unavailable` when ModemManager or the modem cannot be reached.
        public var state: String
        public var signalPercent: Int?
        /// `home`, `roaming`, `searching`, `denied`, `idle`, …
        public var registration: String?
        public var operatorName: String?
        /// What stops it sending; nil when it can.
        public var problem: String?
    }

    public struct NotWorn: Codable, Sendable, Equatable {
        /// When the stillness began, ISO 8601 (the verdict comes minutes later).
        public var since: String
        /// The incident the episode is logged under (`FG-fault-3`).
        public var incident: String
        /// Whether the helpers were sent the device-problem alert (`alarm.not-worn-alert`).
        public var reported: Bool
    }

    public static func path(in stateDirectory: String) -> String { stateDirectory + "/status.json" }

    /// Writes atomically: temp file in the same directory, fsync, rename.
    public func write(to stateDirectory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = try encoder.encode(self)
        // The temporary made afresh, never through a link (StateFiles).
        try StateFiles.writeAtomically(data, to: Self.path(in: stateDirectory))
    }

    public static func read(from stateDirectory: String) throws -> DaemonStatus {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(in: stateDirectory)))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(DaemonStatus.self, from: data)
    }
}

/// ISO 8601 with the local offset, as the messages and the status show times.
public func isoTimestamp(_ date: Date = Date()) -> String {
    SystemLocalTime.iso8601(date)
}
