import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One thread's announcement of the snapshot it is reading (a hazard pointer): the address
/// of that snapshot while a read runs, 0 otherwise. Only its thread writes it; writers read
/// every slot before they free a replaced snapshot.
struct ReaderSlot: ~Copyable {
    let address = Atomic<UInt>(0)
}

/// Every thread's ``ReaderSlot``.
///
/// A thread gets a slot on its first read and gives it back when it exits; slots are reused,
/// never freed, so there are never more than the most threads that read at the same time.
enum ReaderSlots {
    /// A slot's address. Slots are never freed, and their only mutable part is atomic.
    private struct Slot: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<ReaderSlot>
    }

    private struct Registry {
        var all: [Slot] = []
        var unused: [Slot] = []
    }

    private static let registry = Locked(Registry())
    private static let slotSpacing = 128

    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
                ReaderSlots.giveBack(pointer.assumingMemoryBound(to: ReaderSlot.self))
            #else
                if let pointer { ReaderSlots.giveBack(pointer.assumingMemoryBound(to: ReaderSlot.self)) }
            #endif
        }
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// This thread's slot. `key` is ``key``, passed in so that a reader that keeps a copy
    /// does not pay for the lazy global's check on every read.
    @inline(__always)
    static func current(key: pthread_key_t) -> UnsafeMutablePointer<ReaderSlot> {
        if let pointer = pthread_getspecific(key) { return pointer.assumingMemoryBound(to: ReaderSlot.self) }
        return register()
    }

    private static func register() -> UnsafeMutablePointer<ReaderSlot> {
        let slot = registry.withLock { registry in
            if let reused = registry.unused.popLast() { return reused }
            // A cache line (two, for adjacent-line prefetch) of its own: slots side by side
            // would make every read on one thread invalidate the other threads' caches.
            let memory = UnsafeMutableRawPointer.allocate(byteCount: slotSpacing, alignment: slotSpacing)
            let slot = Slot(pointer: memory.bindMemory(to: ReaderSlot.self, capacity: 1))
            slot.pointer.initialize(to: ReaderSlot())
            registry.all.append(slot)
            return slot
        }.pointer
        pthread_setspecific(key, slot)
        return slot
    }

    private static func giveBack(_ slot: UnsafeMutablePointer<ReaderSlot>) {
        slot.pointee.address.store(0, ordering: .releasing)
        registry.withLock { $0.unused.append(Slot(pointer: slot)) }
    }

    /// The addresses every thread announces now.
    static func announced() -> Set<UInt> {
        registry.withLock { registry in
            var addresses = Set<UInt>()
            for slot in registry.all {
                let address = slot.pointer.pointee.address.load(ordering: .sequentiallyConsistent)
                if address != 0 { addresses.insert(address) }
            }
            return addresses
        }
    }
}
