import Foundation

/// A value that threads share, guarded by a lock that ThreadSanitizer understands.
///
/// The standard library's `Mutex` locks with futex system calls from code that is not built
/// for ThreadSanitizer, so `swift test --sanitize=thread` reports every access it guards as a
/// race. This type locks a `pthread_mutex_t` (through `NSLock`), which ThreadSanitizer
/// intercepts: the same cost when uncontended, one allocation more, and sanitizer runs that
/// report only real races. Readers of snapshots take no lock at all (``SnapshotStore``).
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock guarding `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock.
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
