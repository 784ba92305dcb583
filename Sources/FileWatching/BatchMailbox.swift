import Locking

/// Hands batches from a watch loop thread to the task running ``FileWatcher/run(onChange:)``.
///
/// Batches delivered while the consumer is busy are merged into one, so a slow callback
/// sees a single batch covering everything that happened meanwhile.
final class BatchMailbox: Sendable {
    /// What the consumer receives.
    enum Item: Sendable, Equatable {
        /// The initial watches are in place.
        case ready
        /// A coalesced burst of changes.
        case batch(FileChangeBatch)
    }

    private struct State: Sendable {
        var ready = false
        var pending: FileChangeBatch?
        var finished = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<Item?, any Error>?
    }

    private let state = Locked(State())

    /// Tells the consumer that watching has started.
    func markReady() {
        let waiter = state.withLock { state -> CheckedContinuation<Item?, any Error>? in
            guard let waiter = state.waiter else {
                state.ready = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: .ready)
    }

    /// Delivers a batch, merging it into one that is still waiting to be taken.
    func deliver(_ batch: FileChangeBatch) {
        let waiter = state.withLock { state -> CheckedContinuation<Item?, any Error>? in
            guard let waiter = state.waiter else {
                if state.pending == nil {
                    state.pending = batch
                } else {
                    state.pending?.merge(batch)
                }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: .batch(batch))
    }

    /// Ends the stream: once pending items are taken, ``next()`` returns `nil` or throws
    /// `failure`.
    func finish(throwing failure: (any Error)? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Item?, any Error>? in
            state.finished = true
            state.failure = failure
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        if let failure {
            waiter?.resume(throwing: failure)
        } else {
            waiter?.resume(returning: nil)
        }
    }

    /// Waits for the next item; `nil` once the stream has finished.
    ///
    /// Only one task may wait at a time.
    func next() async throws -> Item? {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<Item?, any Error>? in
                if state.ready {
                    state.ready = false
                    return .success(.ready)
                }
                if let pending = state.pending {
                    state.pending = nil
                    return .success(.batch(pending))
                }
                if state.finished {
                    return state.failure.map { .failure($0) } ?? .success(nil)
                }
                precondition(state.waiter == nil, "BatchMailbox supports a single consumer")
                state.waiter = continuation
                return nil
            }
            if let result {
                continuation.resume(with: result)
            }
        }
    }
}
