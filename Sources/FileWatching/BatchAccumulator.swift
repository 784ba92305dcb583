/// Collects affected paths during a burst and decides when the burst is over.
///
/// Each event is either a *completion* event, after which the affected file is complete (the
/// close of a file opened for writing, or the rename that puts a file into place), or an event
/// of a change still *in progress* (everything else). The quiet time that ends a burst depends
/// on the burst's most recent event:
///
/// - If it was a completion event, the burst is due ``settle`` after it: a save has just
///   finished, so reporting it soon cannot expose a half-written file.
/// - Otherwise the burst is due ``debounce`` after it, so a save still under way has time to
///   finish. An in-progress event after a completion event therefore falls back to the full
///   debounce, and a completion event after in-progress events switches to the short settle.
///
/// Either way a burst is due ``maximumDelay`` after its first event at the latest, so a
/// continuous stream of changes still gets reported.
struct BatchAccumulator {
    /// The quiet time that ends a burst whose most recent event was in progress.
    let debounce: Duration
    /// The quiet time that ends a burst whose most recent event was a completion event.
    let settle: Duration
    /// The longest a burst is held back.
    let maximumDelay: Duration

    private var batch = FileChangeBatch()
    private var firstEvent: ContinuousClock.Instant?
    private var lastEvent: ContinuousClock.Instant?
    /// Whether the most recent event of the burst was a completion event.
    private var lastEventCompleted = false

    /// Creates an empty accumulator.
    ///
    /// - Parameters:
    ///   - debounce: The quiet time after an in-progress event.
    ///   - settle: The quiet time after a completion event, normally much shorter than
    ///     `debounce`.
    ///   - maximumDelay: The longest a burst is held back after its first event.
    init(debounce: Duration, settle: Duration, maximumDelay: Duration) {
        self.debounce = debounce
        self.settle = settle
        self.maximumDelay = maximumDelay
    }

    /// `true` while a burst is being collected.
    var isCollecting: Bool { firstEvent != nil }

    /// When the current burst is due, or `nil` if nothing is pending.
    ///
    /// ``settle`` after the last event if that was a completion event, otherwise ``debounce``
    /// after it; never later than ``maximumDelay`` after the first event.
    var deadline: ContinuousClock.Instant? {
        guard let firstEvent, let lastEvent else { return nil }
        let quiet = lastEventCompleted ? settle : debounce
        return min(lastEvent + quiet, firstEvent + maximumDelay)
    }

    /// Records an event that affected `paths` at `now`.
    ///
    /// Events must be added in the order they happened; the last one decides which quiet time
    /// applies.
    ///
    /// - Parameters:
    ///   - paths: The configured paths the event affected.
    ///   - completion: `true` if the event leaves the affected file complete, such as the close
    ///     of a file written in place or the rename that finishes an atomic save; `false` for a
    ///     change that may still be in progress.
    ///   - overflowed: Whether events were lost.
    ///   - events: How many raw events this stands for.
    ///   - now: When the event was seen.
    mutating func add(
        paths: Set<String>, completion: Bool = false, overflowed: Bool = false, events: Int = 1,
        at now: ContinuousClock.Instant
    ) {
        batch.merge(FileChangeBatch(paths: paths, overflowed: overflowed, eventCount: events))
        if firstEvent == nil { firstEvent = now }
        lastEvent = now
        lastEventCompleted = completion
    }

    /// Returns the batch if its deadline has passed at `now`, and starts a new one.
    mutating func takeIfDue(at now: ContinuousClock.Instant) -> FileChangeBatch? {
        guard let deadline, now >= deadline else { return nil }
        let due = batch
        batch = FileChangeBatch()
        firstEvent = nil
        lastEvent = nil
        lastEventCompleted = false
        return due
    }
}
