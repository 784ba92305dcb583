import Foundation

/// A value that threads share, guarded by a lock that ThreadSanitizer understands.
///
/// The standard library's `Mutex` locks with futex system calls from code that is not built
/// for ThreadSanitizer, so `swift test --sanitize=thread` reports the accesses it guards as
/// races. This locks a `pthread_mutex_t` (through `NSLock`), which ThreadSanitizer intercepts
/// (as `Environments`' `Locked`, which this module cannot depend on).
package final class LockedState<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock guarding `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock.
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
