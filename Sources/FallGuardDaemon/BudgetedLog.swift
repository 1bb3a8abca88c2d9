import FallGuardWeb
import Logging

extension Logger {
    /// Logs `line` as a warning if `budget` lets it through this minute, after a line saying how
    /// many like it were withheld before it: many clients (or one flooding bridge) together
    /// must not flood the journal, whose rate limit would then drop the lines that matter.
    func warning(_ line: String, within budget: LineBudget, now: Double) {
        guard let withheld = budget.take(now: now) else { return }
        if withheld > 0 { warning("\(withheld) more lines of this kind were not logged (at most \(budget.perMinute) a minute)") }
        warning("\(line)")
    }
}
