extension Environment {
    // MARK: - Observing

    /// Calls `callback` after every change applied from now on, with the changed keys, for as
    /// long as the returned token is kept.
    ///
    /// ```swift
    /// let observation = Environment.shared.onChange { change in
    ///     logger.info("configuration changed", metadata: ["keys": "\(change.changedKeys)"])
    /// }
    /// // ... later, to stop (or let `observation` go):
    /// observation.cancel()
    /// ```
    ///
    /// Callbacks run on the environment's own serial queue, never on the thread that
    /// reloaded: one at a time, in the order the changes were applied (their
    /// ``EnvironmentSnapshot/generation`` increases), each after the change's snapshot is in
    /// place. A slow callback delays the ones after it, not reloads or readers.
    ///
    /// The environment holds `callback` until the observation ends: a callback that captures
    /// an environment of its own (not ``shared``) keeps that environment alive until then.
    /// The change itself carries both snapshots, so most callbacks need not capture it.
    ///
    /// - Returns: The observation: it ends when the token is released or
    ///   ``ObserverToken/cancel()`` is called. A result that is discarded ends it at once (the
    ///   compiler warns).
    public func onChange(_ callback: @escaping @Sendable (EnvironmentChange) -> Void) -> ObserverToken {
        ObserverToken(observers: observers, id: observers.add(callback))
    }

    /// Every change applied from now on, as an `AsyncSequence`, in the order they were
    /// applied. The stream ends when the consuming task is cancelled; slow consumers see
    /// every change (unbounded buffer).
    public func changes() -> AsyncStream<EnvironmentChange> {
        let (stream, continuation) = AsyncStream<EnvironmentChange>.makeStream()
        let id = observers.add { continuation.yield($0) }
        // The queue, not the environment: the stream ends (and this closure is released) when
        // its consumer lets go of it or is cancelled, so nothing is kept alive beyond that.
        let observers = self.observers
        continuation.onTermination = { _ in observers.remove(id, waiting: false) }
        return stream
    }
}
