import Locking
import Synchronization

/// What an ``Environment`` holds: its snapshot store, its writer's and its status's locks, its
/// observers.
///
/// An environment keeps them in this object rather than in stored properties of its own so that
/// ``Environment/shared`` can hold nothing but a constant: its parts are ``shared``. Swift
/// initializes such an object statically, as an object whose reference count is never written.
/// Every call site retains and releases `Environment.shared` around a call (the compiler does, for
/// any class instance in a global that another module reads); on an ordinary object those are
/// writes to one cache line that every reading thread makes, and two threads reading at once
/// would slow each other down.
final class EnvironmentParts: Sendable {
    /// The shared environment's parts.
    static let shared = EnvironmentParts(
        store: SnapshotStore(), writer: Environment.WriterState(), status: Environment.Status())

    // Locks, always taken in this order: `writer`, then `store`'s or `status`'s (each held
    // only to copy a value in or out). Readers take none.
    let store: SnapshotStore
    let writer: Locked<Environment.WriterState>
    let status: Locked<Environment.Status>
    let observers = ObserverQueue()
    /// The thread that holds ``writer`` while it builds a snapshot, or 0: a read that this
    /// thread makes (from `validate`) of a ``Environment/shared`` environment not yet loaded must
    /// not wait for the lock it holds.
    let buildingThread = Atomic<UInt>(0)

    init(store: SnapshotStore, writer: Environment.WriterState, status: Environment.Status) {
        self.store = store
        self.writer = Locked(writer)
        self.status = Locked(status)
    }

    /// `body(self)`: what ``Environment/withParts(_:)`` calls through optional chaining.
    @inline(__always)
    func run<Result>(_ body: (EnvironmentParts) -> Result) -> Result {
        body(self)
    }
}
