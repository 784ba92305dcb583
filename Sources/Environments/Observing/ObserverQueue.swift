import Dispatch
import Synchronization

/// An environment's observers and the serial queue they run on: the environment's own
/// executor for callbacks, so that a reload (on whatever thread it runs, holding the
/// environment's writer lock) never runs application code after its snapshot is in place,
/// and callbacks see the changes one at a time in the order they were applied.
///
/// The registry is only touched on the queue: a registration is queued like a change, so an
/// observer receives exactly the changes applied after ``add(_:)`` returned.
final class ObserverQueue: @unchecked Sendable {
    typealias Callback = @Sendable (EnvironmentChange) -> Void

    private let queue = DispatchQueue(label: "Environments.observers")
    private let nextToken = Atomic<UInt64>(0)
    /// How many observers are registered or queued for registration: with none, a change is
    /// not queued, so that nothing holds the replaced snapshot (and a rotated secret) longer.
    private let registered = Atomic<Int>(0)
    /// Touched only on `queue`, which is what makes this type `Sendable`.
    private var callbacks: [(token: UInt64, callback: Callback)] = []

    /// Marks `queue`, so that ``remove(_:waiting:)`` called from a callback does not wait for itself.
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    init() {
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    private var isOnQueue: Bool { DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) }

    /// Registers `callback` for every change delivered after this returns; the result
    /// identifies it for ``remove(_:waiting:)``.
    func add(_ callback: @escaping Callback) -> UInt64 {
        let token = nextToken.add(1, ordering: .relaxed).newValue
        registered.add(1, ordering: .sequentiallyConsistent)
        queue.async { self.callbacks.append((token, callback)) }
        return token
    }

    /// Unregisters an observer. Unless `waiting` is `false`, when this returns the callback is
    /// not running and is never called again (called from a callback, that holds at once).
    func remove(_ token: UInt64, waiting: Bool = true) {
        let removal: @Sendable () -> Void = {
            guard let index = self.callbacks.firstIndex(where: { $0.token == token }) else { return }
            self.callbacks.remove(at: index)
            self.registered.subtract(1, ordering: .sequentiallyConsistent)
        }
        if isOnQueue {
            removal()
        } else if waiting {
            queue.sync(execute: removal)
        } else {
            queue.async(execute: removal)
        }
    }

    /// Calls every registered callback with `change`, on the queue, after the changes queued
    /// before it.
    func deliver(_ change: EnvironmentChange) {
        guard registered.load(ordering: .sequentiallyConsistent) > 0 else { return }
        queue.async {
            for (_, callback) in self.callbacks { callback(change) }
        }
    }
}
