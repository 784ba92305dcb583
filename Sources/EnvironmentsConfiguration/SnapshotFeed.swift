#if SwiftConfiguration
    import Environments
    import Locking

    /// Turns the environment's applied changes into an `AsyncStream` for one watcher.
    ///
    /// It registers an observer before it offers the current snapshot, so no change can fall
    /// between the two. Observers of reloads that ran at the same time may be called out of
    /// order; the feed passes a snapshot on only if its generation is newer than the last one,
    /// so a watcher never sees an older configuration after a newer one. The stream keeps only
    /// the newest element: a slow consumer skips to the latest, and memory stays bounded.
    final class SnapshotFeed<Element: Sendable>: Sendable {
        private struct State {
            var generation: UInt64 = 0
            var last: Element?
        }

        let stream: AsyncStream<Element>
        private let continuation: AsyncStream<Element>.Continuation
        private let transform: @Sendable (EnvironmentSnapshot) -> Element
        private let isRepeat: @Sendable (Element, Element) -> Bool
        private let state = Locked(State())
        private let observation: Locked<ObserverToken?> = Locked(nil)

        /// Starts feeding: the current snapshot now, and every applied change until ``finish()``.
        ///
        /// - Parameters:
        ///   - transform: What the watcher receives for a snapshot.
        ///   - isRepeat: Whether an element says nothing new after the previous one; repeats are
        ///     not delivered.
        init(
            environment: Environment, transform: @escaping @Sendable (EnvironmentSnapshot) -> Element,
            isRepeat: @escaping @Sendable (Element, Element) -> Bool
        ) {
            (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(1))
            self.transform = transform
            self.isRepeat = isRepeat
            let observation = environment.onChange { [weak self] change in self?.offer(change.current) }
            self.observation.withLock { $0 = observation }
            offer(environment.snapshot)
        }

        /// Delivers `snapshot` unless a newer one was delivered already or nothing changed.
        private func offer(_ snapshot: EnvironmentSnapshot) {
            state.withLock { state in
                guard snapshot.generation > state.generation else { return }
                state.generation = snapshot.generation
                let element = transform(snapshot)
                if let last = state.last, isRepeat(last, element) { return }
                state.last = element
                // Yielded under the lock, so that two offers cannot reach the stream out of order.
                continuation.yield(element)
            }
        }

        /// Stops feeding and ends the stream.
        func finish() {
            observation.withLock { $0.take() }?.cancel()
            continuation.finish()
        }
    }
#endif
