import CTimex

/// What the kernel says of the wall clock (`adjtimex` with no change: any user may ask).
public enum SystemClock {
    /// Whether the clock is synchronised (NTP, chrony or systemd-timesyncd told the kernel so:
    /// not `TIME_ERROR` and `STA_UNSYNC` clear, what `timedatectl`'s NTPSynchronized reads);
    /// nil when the kernel does not answer. A Pi without a real-time clock boots unsynchronised
    /// with the time it last saved.
    public static func synchronized() -> Bool? {
        switch fg_clock_synchronized() {
        case 1: true
        case 0: false
        default: nil
        }
    }
}
