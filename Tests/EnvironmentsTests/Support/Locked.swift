import Synchronization

/// A value shared between a test and the closures it hands out (observers, validators,
/// tasks), behind a mutex.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    /// The current value.
    var value: Value { mutex.withLock { $0 } }

    /// Changes the value under the lock.
    func withLock<Result: Sendable>(_ body: (inout sending Value) throws -> sending Result) rethrows -> Result {
        try mutex.withLock(body)
    }
}
