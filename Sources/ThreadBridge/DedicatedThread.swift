import Foundation
import Locking

/// Blocking work on a thread of its own, never on Swift's cooperative pool, and its result
/// handed back: to async code (``run(named:onCancel:_:)``) or to synchronous code
/// (``start(named:_:)`` and ``Joinable/join()``).
///
/// The result always crosses through a ``Locked`` value, never through the continuation or a
/// semaphore alone: ThreadSanitizer sees the lock order every write the thread made before
/// the reader's reads.
package enum DedicatedThread {
    /// Runs `body` on a new thread named `name` and returns its result once it has returned.
    ///
    /// Cancelling the calling task calls `onCancel`, which must make `body` return soon (a
    /// ``WakeupPipe/signal()`` that its `poll(2)` waits on, a flag it checks); the thread is
    /// always awaited, so nothing it uses is freed while it runs.
    package static func run<Result: Sendable>(
        named name: String, onCancel: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () -> Result
    ) async -> Result {
        let handoff = Handoff<Result>()
        let thread = Thread { handoff.finish(body()) }
        thread.name = name
        thread.start()
        return await withTaskCancellationHandler {
            await handoff.value()
        } onCancel: {
            onCancel()
        }
    }

    /// Starts `body` on a new thread named `name`, for synchronous code that does something
    /// else meanwhile (reads one pipe while the thread reads another) and then joins it.
    package static func start<Result: Sendable>(
        named name: String, _ body: @escaping @Sendable () -> Result
    ) -> Joinable<Result> {
        let joinable = Joinable<Result>()
        let thread = Thread { joinable.finish(body()) }
        thread.name = name
        thread.start()
        return joinable
    }

    /// A thread's result, awaited once by one task.
    private final class Handoff<Result: Sendable>: Sendable {
        private enum State {
            case running
            case waiting(CheckedContinuation<Void, Never>)
            case finished(Result)
        }

        private let state = Locked<State>(.running)

        /// Called on the thread: stores the result and resumes the waiter, if one waits.
        func finish(_ result: Result) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state = .finished(result) }
                if case .waiting(let waiter) = state { return waiter }
                return nil
            }
            waiter?.resume()
        }

        /// The result, once the thread stored it.
        func value() async -> Result {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let finished = state.withLock { state -> Bool in
                    if case .finished = state { return true }
                    state = .waiting(continuation)
                    return false
                }
                if finished { continuation.resume() }
            }
            return state.withLock { state in
                guard case .finished(let result) = state else { preconditionFailure("resumed before the result") }
                return result
            }
        }
    }
}

/// A thread started by ``DedicatedThread/start(named:_:)``: ``join()`` waits for its result.
package final class Joinable<Result: Sendable>: Sendable {
    private let result = Locked<(finished: Bool, value: Result?)>((false, nil))
    private let done = DispatchSemaphore(value: 0)

    init() {}

    func finish(_ value: Result) {
        result.withLock { $0 = (true, value) }
        done.signal()
    }

    /// Blocks the calling thread until the thread returned, then gives its result. Call it
    /// once, never on Swift's cooperative pool.
    package func join() -> Result {
        done.wait()
        return result.withLock { $0.value! }
    }
}
