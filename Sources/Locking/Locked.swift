#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that threads share, guarded by a lock: the project's one lock type.
///
/// It locks a `pthread_mutex_t`, which ThreadSanitizer intercepts. The standard library's
/// `Mutex` locks with futex system calls from code that is not built for ThreadSanitizer, so
/// `swift test --sanitize=thread` would report every access it guards as a race; this type
/// costs the same when uncontended (one allocation more), and sanitizer runs report only real
/// races.
///
/// A lock that a read of a snapshot may take is made with `survivesFork: true`
/// (``ForkSafeLocks``): `fork()` waits until no thread holds it, and the child finds it free.
/// Readers of snapshots take no lock at all in the common case (`SnapshotStore`).
///
/// The article "Architecture" in the `Environments` documentation says which lock guards what.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let survivesFork: Bool
    private var value: Value

    /// A lock guarding `value`; with `survivesFork`, one that `fork()` never leaves held in the
    /// child (``ForkSafeLocks``), for locks held only for a few assignments.
    package init(_ value: Value, survivesFork: Bool = false) {
        self.value = value
        self.survivesFork = survivesFork
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        if survivesFork { ForkSafeLocks.add(mutex) }
    }

    deinit {
        if survivesFork { ForkSafeLocks.remove(mutex) }
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
