import Synchronization

/// Holds an environment's current snapshot so that readers take no lock and write no memory
/// that another thread writes.
///
/// The store owns every snapshot it published: the current one and the replaced ones that a
/// reader may still be using. A read announces the snapshot it is about to use in its
/// thread's ``ReaderSlot`` and checks that it is still current; a replaced snapshot is freed
/// only when no slot announces it. So a snapshot cannot be freed while a read uses it, and a
/// replaced one (with any secret that was rotated away) is freed as soon as the last read
/// that used it ends, whether or not the reading threads ever read again.
final class SnapshotStore: Sendable {
    private struct Owned {
        var current: EnvironmentSnapshot?
        /// Replaced snapshots that a read announced when they were replaced.
        var retired: [EnvironmentSnapshot] = []
    }

    /// The current snapshot's address, 0 before the first one is published.
    private let currentAddress = Atomic<UInt>(0)
    private let owned: Locked<Owned>
    private let slotKey = ReaderSlots.key

    /// A store with nothing published yet: reads return `nil` until ``publish(_:)``.
    init() {
        owned = Locked(Owned())
    }

    init(_ snapshot: EnvironmentSnapshot) {
        owned = Locked(Owned(current: snapshot))
        currentAddress.store(Self.address(of: snapshot), ordering: .releasing)
    }

    private static func address(of snapshot: EnvironmentSnapshot) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(snapshot).toOpaque())
    }

    /// Makes `snapshot` the current one; readers see it on their next read.
    func publish(_ snapshot: EnvironmentSnapshot) {
        let freed = owned.withLock { owned in
            if let replaced = owned.current { owned.retired.append(replaced) }
            owned.current = snapshot
            currentAddress.store(Self.address(of: snapshot), ordering: .sequentiallyConsistent)
            return Self.takeUnannounced(from: &owned.retired)
        }
        // Released here, outside the lock.
        _ = freed
    }

    /// Publishes `snapshot` only if nothing was published yet.
    ///
    /// - Returns: Whether it was published.
    func publishIfEmpty(_ snapshot: EnvironmentSnapshot) -> Bool {
        owned.withLock { owned in
            guard owned.current == nil else { return false }
            owned.current = snapshot
            currentAddress.store(Self.address(of: snapshot), ordering: .sequentiallyConsistent)
            return true
        }
    }

    /// The current snapshot, retained: for callers that keep it.
    func load() -> EnvironmentSnapshot? {
        owned.withLock { $0.current }
    }

    /// Runs `body` with the current snapshot, or returns `nil` if none was published.
    ///
    /// `body` must be short: it runs while this thread's slot announces the snapshot (a read
    /// that starts inside it takes the slower, locked path).
    @inline(__always)
    func read<Result>(_ body: (EnvironmentSnapshot) -> Result) -> Result? {
        guard let (slot, address) = announceCurrent() else { return load().map(body) }
        defer { withdraw(slot, address) }
        return Self.snapshot(at: address)._withUnsafeGuaranteedRef(body)
    }

    /// The entry at `key` in the current snapshot; `.none` if none was published. The same
    /// as `read { $0.table[key] }` without a closure: the hot path of every lookup.
    @inline(__always)
    func entry(forKey key: String) -> SettingEntry?? {
        guard let (slot, address) = announceCurrent() else { return load().map { $0.table[key] } }
        let entry = Self.snapshot(at: address)._withUnsafeGuaranteedRef { $0.table[key] }
        withdraw(slot, address)
        return .some(entry)
    }

    /// The current snapshot's address, announced in this thread's slot; `nil` if none was
    /// published or the slot is in use (a read inside a read), when the caller takes the
    /// locked path.
    @inline(__always)
    private func announceCurrent() -> (UnsafeMutablePointer<ReaderSlot>, UInt)? {
        let slot = ReaderSlots.current(key: slotKey)
        if slot.pointee.address.load(ordering: .relaxed) != 0 { return nil }
        var address = currentAddress.load(ordering: .acquiring)
        while true {
            if address == 0 { return nil }
            // Announce, then check that the snapshot is still current: a writer that replaced
            // it after this point sees the announcement (both sequentially consistent).
            slot.pointee.address.store(address, ordering: .sequentiallyConsistent)
            let latest = currentAddress.load(ordering: .sequentiallyConsistent)
            if latest == address { return (slot, address) }
            address = latest
        }
    }

    /// Ends a read that ``announceCurrent()`` began.
    ///
    /// Never inlined, on purpose: it is the barrier that keeps the read's retains inside the
    /// read. Whatever `body` copies out of the snapshot (the snapshot itself, a string's
    /// storage in a value) is retained by code that the optimizer may move later, towards the
    /// copy's first use; inlined, the withdrawing store was no obstacle, and a release build
    /// retained a returned snapshot after its slot was cleared, by which time a writer could
    /// have freed it (the soak benchmark crashed in `swift_retain` within seconds). A call that
    /// may release objects, as this one may, is a point no retain is moved past.
    @inline(never)
    private func withdraw(_ slot: UnsafeMutablePointer<ReaderSlot>, _ address: UInt) {
        slot.pointee.address.store(0, ordering: .releasing)
        // Replaced during this read: free it now if no other read holds it. (If a writer and
        // this check race, the next publish frees it.)
        if currentAddress.load(ordering: .relaxed) != address { releaseUnannounced() }
    }

    /// The snapshot at an announced address. The store keeps it alive while a slot announces
    /// it, so a read may use it without a reference of its own (`_withUnsafeGuaranteedRef`).
    /// Retaining it instead would make every reading thread write the same reference count,
    /// which costs more than the lookup itself when two threads read at once (the
    /// benchmark's two-thread figures).
    @inline(__always)
    private static func snapshot(at address: UInt) -> Unmanaged<EnvironmentSnapshot> {
        Unmanaged<EnvironmentSnapshot>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
    }

    private func releaseUnannounced() {
        let freed = owned.withLock { Self.takeUnannounced(from: &$0.retired) }
        _ = freed
    }

    /// Removes and returns the retired snapshots that no reader announces.
    private static func takeUnannounced(from retired: inout [EnvironmentSnapshot]) -> [EnvironmentSnapshot] {
        if retired.isEmpty { return [] }
        let announced = ReaderSlots.announced()
        var freed: [EnvironmentSnapshot] = []
        retired.removeAll { snapshot in
            let unused = !announced.contains(address(of: snapshot))
            if unused { freed.append(snapshot) }
            return unused
        }
        return freed
    }
}
