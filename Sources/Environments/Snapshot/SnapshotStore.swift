import Locking
import Synchronization

/// Holds an environment's current snapshot so that reads take no shared lock and write no
/// memory that another thread uses.
///
/// Each thread keeps a reference to the snapshot it last read (``ThreadSnapshotCache``),
/// checked against the store's version on every read: a read that finds its thread's
/// snapshot current reads it from there, and only a thread's first read after a publish takes the
/// store's lock, to fetch the new snapshot.
///
/// A read takes the snapshot from its thread's cache, which holds it for as long as the read
/// lasts, and only reads the store, the store's version and the snapshot's table. A lookup
/// reaches the table through plain pointers kept in the cache (``SettingLookup``), so it
/// retains neither the snapshot nor its table: no reference count that every reading thread
/// would write (supported API only, no borrowing tricks).
///
/// A publish drops the replaced snapshot from every thread's cache (a thread that is
/// reading at that moment drops it when its read ends), so a replaced snapshot, with any
/// secret that was rotated away, is freed when the last read that used it ends, whether or
/// not the threads that read it ever read again.
///
/// Its lock, and the registry of thread caches, are taken before `fork()` and made new in the
/// child (each a `Locked` that survives `fork()`): a child process reads and publishes as its parent did, and holds
/// no view for the parent's other threads.
final class SnapshotStore: Sendable {
    private static let identities = Atomic<UInt64>(1)

    /// Names this store in the threads' caches: unlike its address, never reused.
    private let identity: UInt64
    /// Counts publishes; changed only under `current`'s lock, with `current`.
    private let version = Atomic<UInt64>(0)
    private let current = Locked<EnvironmentSnapshot?>(nil, survivesFork: true)
    private let cacheKey = ThreadSnapshotCache.key

    /// A store with nothing published yet: reads return `nil` until ``publish(_:)``.
    init() {
        identity = Self.identities.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    convenience init(_ snapshot: EnvironmentSnapshot) {
        self.init()
        publish(snapshot)
    }

    deinit {
        ThreadSnapshotCache.drop(store: identity, olderThan: .max)
    }

    /// Makes `snapshot` the current one; every thread sees it on its next read.
    func publish(_ snapshot: EnvironmentSnapshot) {
        let (replaced, published) = current.withLock { current in
            defer { current = snapshot }
            return (current, version.add(1, ordering: .releasing).newValue)
        }
        ThreadSnapshotCache.drop(store: identity, olderThan: published)
        _ = replaced  // the store's reference, released here, outside the lock
    }

    /// The current snapshot, retained: for callers that keep it.
    func load() -> EnvironmentSnapshot? {
        current.withLock { $0 }
    }

    /// Runs `body` with the current snapshot, or returns `nil` if none was published.
    @inline(__always)
    func read<Result>(_ body: (EnvironmentSnapshot) -> Result) -> Result? {
        // The cache holds the snapshot until the read ends (a writer sweeps only idle caches).
        withHeld { body($0.snapshot.takeUnretainedValue()) }
    }

    /// The entry at `key` in the current snapshot; `.none` if none was published: the hot
    /// path of every lookup. It probes the snapshot's table through the thread's cache and
    /// writes no reference count; only a key that the table's bytes cannot decide (see
    /// ``SettingLookup/entry(forKey:)``) takes the snapshot itself.
    @inline(__always)
    func entry(forKey key: String) -> SettingEntry?? {
        withHeld { held in
            if let decided = held.lookup.entry(forKey: key) { return decided }
            return held.snapshot.takeUnretainedValue().entry(forKey: key)
        }
    }

    /// Runs `body` with the current snapshot as its thread's cache holds it, or returns `nil`
    /// if none was published.
    @inline(__always)
    private func withHeld<Result>(_ body: (ThreadSnapshotCache.Held) -> Result) -> Result? {
        let cache = ThreadSnapshotCache.current(key: cacheKey)
        // A read inside a read (or beside a writer sweeping this thread's cache) takes the lock.
        guard cache.pointee.beginRead() else {
            guard let snapshot = load() else { return nil }
            return withExtendedLifetime(snapshot) { body(ThreadSnapshotCache.Held(snapshot)) }
        }
        defer { cache.pointee.endRead() }
        guard
            let held = cache.pointee.snapshot(of: identity, version: version.load(ordering: .acquiring))
                ?? refill(cache)
        else {
            return nil
        }
        return body(held)
    }

    /// How many threads' caches hold one of this store's snapshots: for tests.
    var threadCachesHoldingViews: Int {
        ThreadSnapshotCache.cachesHoldingViews(of: identity)
    }

    /// Fetches the current snapshot into the thread's cache (which the caller holds).
    private func refill(_ cache: UnsafeMutablePointer<ThreadSnapshotCache>) -> ThreadSnapshotCache.Held? {
        let (snapshot, published) = current.withLock { ($0, version.load(ordering: .relaxed)) }
        guard let snapshot else { return nil }
        return cache.pointee.keep(snapshot, of: identity, version: published)
    }
}
