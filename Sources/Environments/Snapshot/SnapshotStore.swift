import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Holds the current snapshot so that readers never take a lock they contend on.
///
/// Writers publish under a mutex and bump an atomic version. Each thread keeps a small
/// cache of (store, version, snapshot); a read only loads the version (a shared, read-mostly
/// cache line) and, when it matches the thread's cached one, uses the cached snapshot without
/// touching any shared reference count. After a swap each thread takes the mutex once to
/// refresh its cache. Old snapshots are released when every thread has moved on (or exited).
final class SnapshotStore: Sendable {
    private static let nextIdentifier = Atomic<UInt64>(1)

    private let identifier: UInt64
    private let version = Atomic<UInt64>(0)
    private let current: Mutex<EnvironmentSnapshot>

    init(_ snapshot: EnvironmentSnapshot) {
        identifier = SnapshotStore.nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue
        current = Mutex(snapshot)
    }

    /// Publishes a new snapshot; readers see it on their next read.
    func publish(_ snapshot: EnvironmentSnapshot) {
        current.withLock { stored in
            stored = snapshot
            version.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// The current snapshot (retained: for callers that keep it).
    func load() -> EnvironmentSnapshot {
        withCurrent { $0 }
    }

    /// Runs `body` with the current snapshot, without retaining it in the common case.
    @inline(__always)
    func withCurrent<Result>(_ body: (EnvironmentSnapshot) throws -> Result) rethrows -> Result {
        let seen = version.load(ordering: .acquiring)
        let cache = ThreadSnapshotCache.current
        return try cache._withUnsafeGuaranteedRef { cache in
            if let hit = cache.lookup(store: identifier, version: seen) {
                return try hit._withUnsafeGuaranteedRef(body)
            }
            let (snapshot, latest) = current.withLock { ($0, version.load(ordering: .acquiring)) }
            cache.store(store: identifier, version: latest, snapshot: snapshot)
            return try body(snapshot)
        }
    }
}

/// A thread's cache of the snapshots it last read, a few stores at a time.
final class ThreadSnapshotCache {
    /// A slot: plain values only, so that reading one touches no reference count.
    private struct Entry {
        var store: UInt64 = 0
        var version: UInt64 = 0
        var unmanaged: Unmanaged<EnvironmentSnapshot>?
    }

    private static let slotCount = 4
    private var entries = [Entry](repeating: Entry(), count: ThreadSnapshotCache.slotCount)
    /// Keeps each slot's snapshot alive while the slot refers to it.
    private var retained = [EnvironmentSnapshot?](repeating: nil, count: ThreadSnapshotCache.slotCount)
    private var nextVictim = 0

    /// The slot used last, checked first: a program reads one store nearly always.
    private var recent = Entry()

    @inline(__always)
    func lookup(store: UInt64, version: UInt64) -> Unmanaged<EnvironmentSnapshot>? {
        if recent.store == store, recent.version == version { return recent.unmanaged }
        return lookupSlots(store: store, version: version)
    }

    private func lookupSlots(store: UInt64, version: UInt64) -> Unmanaged<EnvironmentSnapshot>? {
        for index in 0..<ThreadSnapshotCache.slotCount {
            let entry = entries[index]
            if entry.store == store {
                guard entry.version == version else { return nil }
                recent = entry
                return entry.unmanaged
            }
        }
        return nil
    }

    func store(store: UInt64, version: UInt64, snapshot: EnvironmentSnapshot) {
        var slot = entries.firstIndex { $0.store == store }
        if slot == nil {
            slot = nextVictim
            nextVictim = (nextVictim + 1) % ThreadSnapshotCache.slotCount
        }
        retained[slot!] = snapshot
        entries[slot!] = Entry(store: store, version: version, unmanaged: .passUnretained(snapshot))
        recent = entries[slot!]
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
                Unmanaged<ThreadSnapshotCache>.fromOpaque(pointer).release()
            #else
                if let pointer { Unmanaged<ThreadSnapshotCache>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// This thread's cache, created on first use and released when the thread exits.
    @inline(__always)
    static var current: Unmanaged<ThreadSnapshotCache> {
        let key = ThreadSnapshotCache.key
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadSnapshotCache>.fromOpaque(pointer)
        }
        let cache = Unmanaged.passRetained(ThreadSnapshotCache())
        pthread_setspecific(key, cache.toOpaque())
        return cache
    }
}
