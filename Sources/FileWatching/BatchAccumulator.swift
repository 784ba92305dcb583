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
///
/// Files still being written hold the whole burst back, each tracked on its own: an entry that
/// was written to (or created empty) is open until its writer closes it or it is renamed or
/// deleted. While any entry of the burst is open, the burst waits, however quiet it is, until
/// the last one closes, and at most ``openWriteLimit`` after the earliest open write began;
/// then it is reported as it is. So a writer that pauses in the middle of a save is not read
/// half-way, and a file that completes its save does not expose another that is still being
/// written.
struct BatchAccumulator {
    /// The quiet time that ends a burst whose most recent event was in progress.
    let debounce: Duration
    /// The quiet time that ends a burst whose most recent event was a completion event.
    let settle: Duration
    /// The longest a burst is held back while events keep arriving and no file is open.
    let maximumDelay: Duration
    /// The longest a burst waits for a file that is still open for writing.
    let openWriteLimit: Duration

    /// What an event did to the file it is about.
    enum WriteEffect: Sendable, Equatable {
        /// Nothing that concerns an open writer (attributes, a symbolic link, a directory).
        case none
        /// The file was written to, or created empty: its writer may still be at work.
        case opened
        /// The file's writer closed it, or the name now holds a complete file (renamed into
        /// place) or nothing (deleted, renamed away).
        case closed
    }

    private var batch = FileChangeBatch()
    private var firstEvent: ContinuousClock.Instant?
    private var lastEvent: ContinuousClock.Instant?
    /// Whether the most recent event of the burst was a completion event.
    private var lastEventCompleted = false
    /// The entries being written, with when their first write of this burst was seen.
    private var openWrites: [String: ContinuousClock.Instant] = [:]

    /// Creates an empty accumulator.
    ///
    /// - Parameters:
    ///   - debounce: The quiet time after an in-progress event.
    ///   - settle: The quiet time after a completion event, normally much shorter than
    ///     `debounce`.
    ///   - maximumDelay: The longest a burst is held back after its first event while no file
    ///     is open for writing.
    ///   - openWriteLimit: The longest a burst waits for a file still open for writing.
    init(debounce: Duration, settle: Duration, maximumDelay: Duration, openWriteLimit: Duration = .seconds(5)) {
        self.debounce = debounce
        self.settle = settle
        self.maximumDelay = maximumDelay
        self.openWriteLimit = openWriteLimit
    }

    /// The entries of the burst that are still open for writing.
    var openEntries: Set<String> { Set(openWrites.keys) }

    /// `true` while a burst is being collected.
    var isCollecting: Bool { firstEvent != nil }

    /// When the current burst is due, or `nil` if nothing is pending.
    ///
    /// While a file is open for writing, ``openWriteLimit`` after the earliest open write began.
    /// Otherwise ``settle`` after the last event if that was a completion event, ``debounce``
    /// after it if not; never later than ``maximumDelay`` after the first event.
    var deadline: ContinuousClock.Instant? {
        guard let firstEvent, let lastEvent else { return nil }
        if let earliest = openWrites.values.min() { return earliest + openWriteLimit }
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
    ///   - mountsChanged: Whether a mount that matters changed.
    ///   - events: How many raw events this stands for.
    ///   - entry: The directory entry the event is about (any spelling that names it uniquely),
    ///     to follow its writer; `nil` for an event about no single file.
    ///   - write: What the event did to that entry's writer.
    ///   - now: When the event was seen.
    mutating func add(
        paths: Set<String>, completion: Bool = false, overflowed: Bool = false, mountsChanged: Bool = false,
        events: Int = 1, entry: String? = nil, write: WriteEffect = .none, at now: ContinuousClock.Instant
    ) {
        batch.merge(
            FileChangeBatch(paths: paths, overflowed: overflowed, eventCount: events, mountsChanged: mountsChanged))
        if let entry {
            switch write {
            case .opened: if openWrites[entry] == nil { openWrites[entry] = now }
            case .closed: openWrites[entry] = nil
            case .none: break
            }
        }
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
        // Whatever is still open was waited for long enough: it was read as it is. Its next
        // write starts a new wait.
        openWrites = [:]
        return due
    }
}
