/// Collects affected paths during a burst and decides when the burst is over.
///
/// A burst ends `debounce` after its last event, or `maximumDelay` after its first one,
/// whichever comes first, so a continuous stream of changes still gets reported.
struct BatchAccumulator {
    /// The quiet time that ends a burst.
    let debounce: Duration
    /// The longest a burst is held back.
    let maximumDelay: Duration

    private var batch = FileChangeBatch()
    private var firstEvent: ContinuousClock.Instant?
    private var lastEvent: ContinuousClock.Instant?

    /// Creates an empty accumulator.
    init(debounce: Duration, maximumDelay: Duration) {
        self.debounce = debounce
        self.maximumDelay = maximumDelay
    }

    /// `true` while a burst is being collected.
    var isCollecting: Bool { firstEvent != nil }

    /// When the current burst is due, or `nil` if nothing is pending.
    var deadline: ContinuousClock.Instant? {
        guard let firstEvent, let lastEvent else { return nil }
        return min(lastEvent + debounce, firstEvent + maximumDelay)
    }

    /// Records an event that affected `paths` at `now`.
    mutating func add(
        paths: Set<String>, overflowed: Bool = false, events: Int = 1,
        at now: ContinuousClock.Instant
    ) {
        batch.merge(FileChangeBatch(paths: paths, overflowed: overflowed, eventCount: events))
        if firstEvent == nil { firstEvent = now }
        lastEvent = now
    }

    /// Returns the batch if its deadline has passed at `now`, and starts a new one.
    mutating func takeIfDue(at now: ContinuousClock.Instant) -> FileChangeBatch? {
        guard let deadline, now >= deadline else { return nil }
        let due = batch
        batch = FileChangeBatch()
        firstEvent = nil
        lastEvent = nil
        return due
    }
}
