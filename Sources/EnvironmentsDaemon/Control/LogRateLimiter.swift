/// Lets at most `burst` log lines through in each `interval` and counts the others, so that a
/// client that misbehaves on purpose cannot flood the journal (whose own rate limit would then
/// drop the daemon's real messages). Used by one thread only.
struct LogRateLimiter {
    let burst: Int
    let interval: Duration
    private var windowStart: ContinuousClock.Instant?
    private var admitted = 0
    private(set) var suppressed = 0

    init(burst: Int, interval: Duration) {
        self.burst = max(burst, 0)
        self.interval = interval
    }

    /// Whether a line may be logged now; if not, it is counted as suppressed.
    mutating func admit(now: ContinuousClock.Instant = .now) -> Bool {
        if let windowStart, now - windowStart < interval {
            guard admitted < burst else {
                suppressed += 1
                return false
            }
        } else {
            // A new window; its first lines go out (after the count of the last one's suppressed).
            windowStart = now
            admitted = 0
        }
        admitted += 1
        return true
    }

    /// Once the window in which lines were suppressed is over: how many, to be logged now
    /// (and the count starts again); otherwise `nil`.
    mutating func takeSuppressed(now: ContinuousClock.Instant = .now) -> Int? {
        guard suppressed > 0, let windowStart, now - windowStart >= interval else { return nil }
        defer { suppressed = 0 }
        return suppressed
    }

    /// When ``takeSuppressed(now:)`` next has a count to give, if it will.
    var deadline: ContinuousClock.Instant? {
        guard suppressed > 0, let windowStart else { return nil }
        return windowStart + interval
    }
}
