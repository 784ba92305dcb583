import Synchronization

/// An observation registered with ``Environment/onChange(_:)``: it lasts as long as the token.
///
/// Keep the token for as long as the callback should be called, and let it go (or call
/// ``cancel()``) to end the observation:
///
/// ```swift
/// final class Pool {
///     private var observation: ObserverToken?
///
///     func start(_ environment: Environment) {
///         observation = environment.onChange { change in
///             if change.changedKeys.contains("Pool.Size") { /* resize */ }
///         }
///     }
/// }
/// ```
///
/// A token that is released ends its observation as ``cancel()`` does, except that it does
/// not wait for a callback that is running at that moment: the callback is not called for any
/// change applied after the token was released.
public final class ObserverToken: Sendable {
    private let observers: ObserverQueue
    private let id: UInt64
    private let isCancelled = Atomic<Bool>(false)

    init(observers: ObserverQueue, id: UInt64) {
        self.observers = observers
        self.id = id
    }

    /// Ends the observation. When this returns, the callback is not running (unless this is
    /// called from that callback) and is never called again. Calling it again does nothing.
    public func cancel() {
        end(waiting: true)
    }

    private func end(waiting: Bool) {
        guard !isCancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        observers.remove(id, waiting: waiting)
    }

    deinit {
        // Not waiting: the last reference may go on any thread, holding any lock, while the
        // callback runs. The removal is queued before any change applied after this.
        end(waiting: false)
    }
}
