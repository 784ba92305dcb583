import Locking
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One thread's references to the snapshots it last read, one per store (the most recently
/// used first), with a try-lock that the thread takes for each read and a writer takes to drop
/// references to replaced snapshots.
///
/// A read uses the snapshot that this cache holds, which keeps it alive for the read
/// (``SnapshotStore/read(_:)``); the cache's entries sit on cache lines of their own, so that
/// two threads' caches never share one.
///
/// Only the state is shared: the entries are read and written by whoever holds the lock,
/// the thread (``beginRead()``) or a writer (``drop(store:olderThan:)``). Neither waits for
/// the other. A read that finds a writer sweeping takes the store's locked path; a writer
/// that finds the thread reading asks it to empty its cache when the read ends.
///
/// Each thread's cache is allocated once, at its first read, and freed when the thread exits
/// (its thread-specific value's destructor). A read reaches it through that pointer: no
/// reference count, and no dynamic exclusivity check (the try-lock is what serializes access).
/// The cache and its entries each have cache lines of their own: what one thread's reads
/// write (the state) and read (the entries) is never beside what another thread writes.
///
/// A thread whose cache was freed keeps one of the ``finished`` caches as its thread-specific
/// value, caches that are never idle: a read there (from another thread-specific value's
/// destructor, which may run after this one's) takes the store's locked path instead of
/// registering a cache that nothing would free. In a process made by `fork()`, the caches of the parent's other threads
/// (threads the child does not have) are freed, with the snapshots they held.
struct ThreadSnapshotCache: ~Copyable {
    private struct Entry {
        let store: UInt64
        let version: UInt64
        let snapshot: EnvironmentSnapshot
    }

    private enum State {
        static let idle = 0
        /// The thread is reading.
        static let reading = 1
        /// The thread is reading, and a writer asked it to empty the cache afterwards.
        static let readingDropWanted = 2
        /// A writer is dropping snapshots.
        static let sweeping = 3
        /// The thread is exiting (``finished``): reads take the locked path, writers never see it.
        static let finished = 4
    }

    /// At most this many stores' snapshots per thread: a thread that reads more stores in turn
    /// takes the locked path more often, and holds no more.
    private static let capacity = 4

    /// The entries, most recently used first.
    private struct Entries {
        /// The most recently used: the one a read looks at first.
        var first: Entry? {
            didSet {
                firstPeek = first.map { Peek(store: $0.store, version: $0.version, held: Held($0.snapshot)) }
            }
        }
        var others: [Entry] = []
        /// `first`, its snapshot unmanaged: what a read compares without copying the entry
        /// (`first` owns the snapshot meanwhile).
        private(set) var firstPeek: Peek?
    }

    /// An entry as a read looks at it: plain values only.
    private struct Peek {
        let store: UInt64
        let version: UInt64
        let held: Held
    }

    /// A snapshot that a cache holds, as a read uses it: no reference to count, so that reads
    /// on many threads write nothing they share. The read probes ``lookup`` (the snapshot's
    /// table); only what the table cannot answer alone takes the snapshot itself.
    ///
    /// Valid only while something holds the snapshot: this thread's cache during a read
    /// (``SnapshotStore/read(_:)``), or the caller that made it.
    struct Held {
        let snapshot: Unmanaged<EnvironmentSnapshot>
        let lookup: SettingLookup

        init(_ snapshot: EnvironmentSnapshot) {
            self.snapshot = .passUnretained(snapshot)
            lookup = snapshot.table.lookup
        }
    }

    private let state: Atomic<Int>
    /// Read and written only under the lock. Memory of its own, apart from `state`: what the
    /// holder of the lock changes never overlaps what the other side accesses meanwhile. Cache
    /// lines of its own too (``allocateEntries()``): a read looks here on every lookup.
    private let entries: UnsafeMutablePointer<Entries>

    // MARK: - Reading (the thread that owns the cache)

    /// Takes the lock for a read; `false` if this thread is already reading (a read inside a
    /// read) or a writer is dropping snapshots, when the caller takes the store's locked path.
    @inline(__always)
    func beginRead() -> Bool {
        state.compareExchange(expected: State.idle, desired: State.reading, ordering: .acquiring).exchanged
    }

    /// Ends a read that ``beginRead()`` began, first emptying the cache if a writer asked for it.
    @inline(__always)
    func endRead() {
        if state.compareExchange(expected: State.reading, desired: State.idle, ordering: .releasing).exchanged {
            return
        }
        dropAllAndUnlock()
    }

    private func dropAllAndUnlock() {
        let dropped = entries.move()
        entries.initialize(to: Entries())
        state.store(State.idle, ordering: .releasing)
        _ = dropped  // the snapshots are released here (and freed, if this held the last reference)
    }

    /// `store`'s snapshot at `version`, if this thread holds it: alive until the read ends
    /// (this cache holds it, and nobody else changes the cache during a read).
    @inline(__always)
    func snapshot(of store: UInt64, version: UInt64) -> Held? {
        if let first = entries.pointee.firstPeek, first.store == store {
            return first.version == version ? first.held : nil
        }
        return moveToFirst(store, version)
    }

    private func moveToFirst(_ store: UInt64, _ version: UInt64) -> Held? {
        let index = entries.pointee.others.firstIndex { $0.store == store }
        guard let index, entries.pointee.others[index].version == version else { return nil }
        let entry = entries.pointee.others.remove(at: index)
        if let first = entries.pointee.first { entries.pointee.others.insert(first, at: 0) }
        entries.pointee.first = entry
        return Held(entry.snapshot)
    }

    /// Keeps `snapshot`, `store`'s snapshot at `version`, in place of any older one, and
    /// returns it as ``snapshot(of:version:)`` does.
    func keep(_ snapshot: EnvironmentSnapshot, of store: UInt64, version: UInt64) -> Held {
        var dropped = removeEntries { $0.store == store }
        if let first = entries.pointee.first { entries.pointee.others.insert(first, at: 0) }
        entries.pointee.first = Entry(store: store, version: version, snapshot: snapshot)
        if entries.pointee.others.count >= Self.capacity { dropped.append(entries.pointee.others.removeLast()) }
        _ = dropped
        return Held(snapshot)
    }

    /// Removes and returns the entries (the first one included) that `matches` selects.
    private func removeEntries(where matches: (Entry) -> Bool) -> [Entry] {
        var removed: [Entry] = []
        entries.pointee.others.removeAll { entry in
            let match = matches(entry)
            if match { removed.append(entry) }
            return match
        }
        if let first = entries.pointee.first, matches(first) {
            removed.append(first)
            entries.pointee.first = nil
        }
        return removed
    }

    // MARK: - Writers

    /// Drops, from every thread's cache, `store`'s snapshots older than
    /// `version` (all of them for `.max`): after a publish, and when a store is freed.
    static func drop(store: UInt64, olderThan version: UInt64) {
        let dropped = registry.withLock { caches in
            caches.flatMap { $0.pointer.pointee.dropSnapshots(of: store, olderThan: version) }
        }
        _ = dropped  // released outside the registry's lock
    }

    private func dropSnapshots(of store: UInt64, olderThan version: UInt64) -> [Entry] {
        sweep(whileReading: []) { removeEntries { $0.store == store && $0.version < version } }
    }

    /// Runs `body` on this cache's entries as a writer (holding the registry's lock), or, if
    /// the owning thread is reading, asks it to empty its cache when its read ends and returns
    /// `whileReading` (that thread may be using a snapshot; it will hold none once the read ends).
    /// Never waits for a read: waiting for a thread that reads in a tight loop (any store's,
    /// so almost never idle) could last forever while a publish waits on the registry's lock.
    private func sweep<Result>(whileReading: Result, _ body: () -> Result) -> Result {
        while true {
            switch state.load(ordering: .relaxed) {
            case State.idle:
                guard
                    state.compareExchange(expected: State.idle, desired: State.sweeping, ordering: .acquiring)
                        .exchanged
                else { continue }
                defer { state.store(State.idle, ordering: .releasing) }
                return body()
            case State.reading:
                if state.compareExchange(
                    expected: State.reading, desired: State.readingDropWanted, ordering: .relaxed
                ).exchanged {
                    return whileReading
                }
            case State.readingDropWanted:
                return whileReading
            default:
                // Another writer is sweeping this cache, for as long as a few comparisons take.
                sched_yield()
            }
        }
    }

    // MARK: - Every thread's cache

    /// A thread's cache, as the registry and the thread-specific value hold it.
    private struct Pointer: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<ThreadSnapshotCache>
    }

    /// Every live thread's cache. Its lock is taken before `fork()` and made new in the child
    /// (a `Locked` that survives `fork()`), where ``forkedChild()`` then frees the other threads' caches.
    private static let registry: Locked<[Pointer]> = {
        let registry = Locked<[Pointer]>([], survivesFork: true)
        let result = pthread_atfork(nil, nil) { ThreadSnapshotCache.forkedChild() }
        precondition(result == 0, "pthread_atfork failed: \(result)")
        return registry
    }()
    private static let spacing = 128

    /// The thread-specific values of a thread whose cache was freed as it exits: caches whose
    /// reads always take the store's locked path, in no registry. The one at index `n` asks the
    /// destructor to set a finished cache `n` more times (see ``threadExited(_:)``).
    nonisolated(unsafe) private static let finished: UnsafeMutablePointer<ThreadSnapshotCache> = {
        let pointer = UnsafeMutablePointer<ThreadSnapshotCache>.allocate(capacity: finishedCount)
        for index in 0..<finishedCount {
            (pointer + index).initialize(to: ThreadSnapshotCache(state: State.finished))
        }
        return pointer
    }()

    /// How many ``finished`` caches: the rounds of destructors but the first (which frees the
    /// cache) and the last (left to the sanitizers, which tear their thread state down in it).
    private static let finishedCount: Int = {
        let rounds = sysconf(Int32(_SC_THREAD_DESTRUCTOR_ITERATIONS))
        return max(1, (rounds > 0 ? rounds : 4) - 2)
    }()

    /// The thread-specific value that points to each thread's cache, freed when the thread exits.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
                ThreadSnapshotCache.threadExited(pointer)
            #else
                if let pointer { ThreadSnapshotCache.threadExited(pointer) }
            #endif
        }
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// This thread's cache. `key` is ``key``, passed in so that a store that keeps a copy
    /// does not pay for the lazy global's check on every read.
    @inline(__always)
    static func current(key: pthread_key_t) -> UnsafeMutablePointer<ThreadSnapshotCache> {
        if let pointer = pthread_getspecific(key) { return pointer.assumingMemoryBound(to: ThreadSnapshotCache.self) }
        return register(key: key)
    }

    private init(state: Int = State.idle) {
        self.state = Atomic(state)
        entries = Self.allocateEntries()
        entries.initialize(to: Entries())
    }

    deinit {
        entries.deinitialize(count: 1)
        UnsafeMutableRawPointer(entries).deallocate()
    }

    /// Memory for the entries, on cache lines of their own (whole ``spacing``s): an allocation
    /// of the C library's beside them may be another thread's, written as often as it reads.
    private static func allocateEntries() -> UnsafeMutablePointer<Entries> {
        let size = (MemoryLayout<Entries>.stride + spacing - 1) / spacing * spacing
        return UnsafeMutableRawPointer.allocate(byteCount: size, alignment: spacing)
            .bindMemory(to: Entries.self, capacity: 1)
    }

    private static func register(key: pthread_key_t) -> UnsafeMutablePointer<ThreadSnapshotCache> {
        // Cache lines of its own (two, for adjacent-line prefetch): caches side by side would make
        // every read on one thread (its state's compare-and-swap) invalidate the others' caches.
        let size = max(MemoryLayout<ThreadSnapshotCache>.stride, spacing)
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: spacing)
            .bindMemory(to: ThreadSnapshotCache.self, capacity: 1)
        pointer.initialize(to: ThreadSnapshotCache())
        registry.withLock { $0.append(Pointer(pointer: pointer)) }
        pthread_setspecific(key, pointer)
        return pointer
    }

    /// The thread-specific value's destructor: frees the thread's cache and leaves a
    /// ``finished`` one in its place, for every round of destructors but the last.
    ///
    /// The C library clears each value before it calls the value's destructor, and runs the
    /// destructors again (`PTHREAD_DESTRUCTOR_ITERATIONS` rounds in all, 4) while any value was
    /// set meanwhile: this one sets a finished cache again in each round but the last two, so
    /// that a read from another destructor after this one, in the same round or the next ones,
    /// takes the locked path. The last round is left alone, because the sanitizers tear their
    /// thread state down in it (code that they instrumented must not run after that); a read
    /// made that late, or late in the round before it, registers a cache as before, freed in
    /// the next round if there is one.
    private static func threadExited(_ raw: UnsafeMutableRawPointer) {
        let pointer = raw.assumingMemoryBound(to: ThreadSnapshotCache.self)
        if let index = (0..<finishedCount).first(where: { finished + $0 == pointer }) {
            if index > 0 { pthread_setspecific(key, finished + (index - 1)) }
            return
        }
        // Out of the registry first: no writer can reach the cache after this.
        registry.withLock { $0.removeAll { $0.pointer == pointer } }
        pointer.deinitialize(count: 1)
        UnsafeMutableRawPointer(pointer).deallocate()
        pthread_setspecific(key, finished + (finishedCount - 1))
    }

    /// After `fork()`, in the child (whose only thread is the one that called `fork()`): frees
    /// the caches of the parent's other threads, which the child does not have, and so the
    /// snapshots (and rotated secrets) that only they still held.
    ///
    /// The registry's lock was held across `fork()`, so no writer was sweeping a cache; a
    /// cache whose thread was reading is left alone (its entries may be half written), and
    /// so are the snapshots it holds.
    private static func forkedChild() {
        let own = pthread_getspecific(key)?.assumingMemoryBound(to: ThreadSnapshotCache.self)
        let freed = registry.withLock { caches in
            var freed: [Pointer] = []
            caches.removeAll { cache in
                guard cache.pointer != own else { return false }
                if cache.pointer.pointee.state.load(ordering: .acquiring) == State.idle { freed.append(cache) }
                return true
            }
            return freed
        }
        for cache in freed {
            cache.pointer.deinitialize(count: 1)
            UnsafeMutableRawPointer(cache.pointer).deallocate()
        }
    }

    /// How many threads' caches hold one of `store`'s snapshots: for tests.
    static func cachesHoldingViews(of store: UInt64) -> Int {
        registry.withLock { caches in
            caches.count { $0.pointer.pointee.holdsSnapshots(of: store) }
        }
    }

    /// Whether this cache holds one of `store`'s snapshots, looked at as a writer
    /// looks (``sweep(whileReading:_:)``): a thread that is reading is asked to empty its cache
    /// when its read ends, as a publish asks, and then holds none.
    private func holdsSnapshots(of store: UInt64) -> Bool {
        sweep(whileReading: false) {
            entries.pointee.first?.store == store || entries.pointee.others.contains { $0.store == store }
        }
    }
}
