import Foundation

/// A value shared between a test and the closures it hands out (observers, validators,
/// tasks), behind a lock that ThreadSanitizer understands (a pthread mutex, through NSLock;
/// `Synchronization.Mutex` locks with futex calls it cannot follow).
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    /// The current value.
    var value: Value { withLock { $0 } }

    /// Changes the value under the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }
}
