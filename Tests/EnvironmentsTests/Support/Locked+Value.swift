import Locking

extension Locked {
    /// The current value (the tests' shorthand for reading it under the lock).
    var value: Value { withLock { $0 } }
}
