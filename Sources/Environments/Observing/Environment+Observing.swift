extension Environment {
    // MARK: - Observing

    /// Calls `callback` after every change applied from now on, with the changed keys.
    ///
    /// Callbacks run on the environment's own serial queue, never on the thread that
    /// reloaded: one at a time, in the order the changes were applied (their
    /// ``EnvironmentSnapshot/generation`` increases), each after the change's snapshot is in
    /// place. A slow callback delays the ones after it, not reloads or readers.
    ///
    /// The environment holds `callback` until ``removeObserver(_:)``: a callback that captures
    /// an environment of its own (not ``shared``) keeps that environment alive until then.
    /// The change itself carries both snapshots, so most callbacks need not capture it.
    ///
    /// - Returns: A token; pass it to ``removeObserver(_:)`` to stop.
    @discardableResult
    public func onChange(_ callback: @escaping @Sendable (EnvironmentChange) -> Void) -> ObserverToken {
        observers.add(callback)
    }

    /// Stops calling an observer. When this returns, the callback is not running (unless this
    /// is called from that callback) and is never called again.
    public func removeObserver(_ token: ObserverToken) {
        observers.remove(token)
    }

    /// Every change applied from now on, as an `AsyncSequence`, in the order they were
    /// applied. The stream ends when the consuming task is cancelled; slow consumers see
    /// every change (unbounded buffer).
    public func changes() -> AsyncStream<EnvironmentChange> {
        let (stream, continuation) = AsyncStream<EnvironmentChange>.makeStream()
        let token = onChange { continuation.yield($0) }
        // Held strongly: the stream ends (and this closure is released) when its consumer lets
        // go of it or is cancelled, so the environment is not kept alive beyond that. (A weak
        // reference would give it a side table that a process-wide environment never frees.)
        continuation.onTermination = { _ in self.observers.remove(token, waiting: false) }
        return stream
    }
}
