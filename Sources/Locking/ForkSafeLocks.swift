#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The mutexes of every ``Locked`` made with `survivesFork: true`, and the `pthread_atfork`
/// handlers that take them all before a `fork()` and release them after it.
///
/// A child process has one thread, the one that called `fork()`: a lock that another thread
/// of the parent held at that moment would stay held in the child forever, and the child's
/// first read (or publish) of a snapshot would wait for it. Every one of these locks is taken
/// before `fork()`, released after it in the parent and made new in the child, so the child
/// finds each lock free and each value whole.
///
/// For the locks that a read of a snapshot may take (a `SnapshotStore`'s and the registry of
/// thread caches), held only for as long as a few assignments take: `fork()` waits for them.
/// No code that holds one creates or frees another (the list of them has a lock of its own).
enum ForkSafeLocks {
    /// Guards ``all``; made (and the handlers installed) with the first lock.
    nonisolated(unsafe) private static let guardMutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        let result = pthread_atfork(
            { ForkSafeLocks.prepare() }, { ForkSafeLocks.parent() }, { ForkSafeLocks.child() })
        precondition(result == 0, "pthread_atfork failed: \(result)")
        return mutex
    }()

    /// Read and written only while holding ``guardMutex``.
    nonisolated(unsafe) private static var all: Set<UnsafeMutablePointer<pthread_mutex_t>> = []

    static func add(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_lock(guardMutex)
        all.insert(mutex)
        pthread_mutex_unlock(guardMutex)
    }

    static func remove(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_lock(guardMutex)
        all.remove(mutex)
        pthread_mutex_unlock(guardMutex)
    }

    /// Before `fork()`: the list, then every lock (none is held while another is taken, so
    /// any order will do), so that no other thread is inside one when the process is copied.
    private static func prepare() {
        pthread_mutex_lock(guardMutex)
        for mutex in all { pthread_mutex_lock(mutex) }
    }

    /// After `fork()`, in the parent: everything as it was.
    private static func parent() {
        for mutex in all { pthread_mutex_unlock(mutex) }
        pthread_mutex_unlock(guardMutex)
    }

    /// After `fork()`, in the child: every lock new and free (the thread that took them is the
    /// child's only one, but a new mutex does not depend on who the owner was).
    private static func child() {
        for mutex in all { pthread_mutex_init(mutex, nil) }
        pthread_mutex_init(guardMutex, nil)
    }
}
