import Dispatch
import Locking

/// Blocking jobs run one at a time, in the order they were submitted, on a serial dispatch
/// queue of their own (never on Swift's cooperative pool), each result awaited by the task
/// that submitted it; and a way for that task to stop waiting: ``abandon()``.
///
/// A job is submitted when ``run(_:)`` or ``runAbandonable(_:)`` is called, before the caller
/// suspends: one task's jobs run in the order it asked for them, and jobs of tasks that ask at
/// the same time in the order their calls took the worker's lock.
///
/// A job submitted with ``run(_:)`` always runs and its result always comes back. A job
/// submitted with ``runAbandonable(_:)`` may be given up: ``abandon()`` resumes every waiter
/// of such a job at once with `nil`, and from then on ``runAbandonable(_:)`` returns `nil`
/// without running anything. A job that is running when ``abandon()`` comes goes on, on its
/// thread, and its result is dropped; an abandonable job still waiting for its turn never
/// runs. A job that must not take effect once abandoned (publish what it built) does that
/// step through ``unlessAbandoned(_:)``, which holds the lock ``abandon()`` takes.
///
/// The result crosses from the queue's thread to the waiter through a ``Locked`` value, never
/// as the continuation's value alone: the lock orders everything the job wrote before the
/// waiter's reads in a way ThreadSanitizer sees. It does not see the ordering of a
/// continuation resumed from a dispatch thread onto an actor, and reported the first read of
/// a snapshot built on the queue as a race.
///
/// Cancelling a waiting task does not stop its job or its wait: a job's caller that must stop
/// waiting calls ``abandon()``.
package final class SerialWorker: Sendable {
    private struct State {
        var isAbandoned = false
        /// Jobs submitted whose turn has not ended yet.
        var pendingJobs = 0
        var lastJob: UInt64 = 0
        /// The waiters of abandonable jobs that have not finished, by job number.
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let queue: DispatchQueue
    private let state = Locked(State())

    /// A worker whose queue is labelled `label` (a thread's name in a debugger and in
    /// ThreadSanitizer's reports).
    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Whether ``abandon()`` was called.
    package var isAbandoned: Bool { state.withLock { $0.isAbandoned } }

    /// How many submitted jobs have not had their turn yet or are running: a job counts from
    /// its submission until it returned, or until its turn came and it was skipped (abandoned).
    package var pendingJobs: Int { state.withLock { $0.pendingJobs } }

    /// Runs `job` after every job submitted before it, and returns its result once it ran.
    /// ``abandon()`` does not concern it: it runs, and its result comes back.
    package func run<Value: Sendable>(_ job: @escaping @Sendable () -> Value) async -> Value {
        let handoff = Locked<Value?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { state in
                state.pendingJobs += 1
                queue.async { [self] in
                    let result = job()
                    self.state.withLock { $0.pendingJobs -= 1 }
                    handoff.withLock { $0 = result }
                    continuation.resume()
                }
            }
        }
        return handoff.withLock { $0.take()! }
    }

    /// Runs `job` after every job submitted before it, and returns its result once it ran;
    /// `nil` if ``abandon()`` came first.
    ///
    /// - Returns: The job's result; `nil` at once if the worker was abandoned already, or as
    ///   soon as ``abandon()`` is called while the job waits for its turn (it never runs then)
    ///   or runs (it goes on, and its result is dropped).
    package func runAbandonable<Value: Sendable>(_ job: @escaping @Sendable () -> Value) async -> Value? {
        let handoff = Locked<Value?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isSubmitted = state.withLock { state -> Bool in
                guard !state.isAbandoned else { return false }
                state.pendingJobs += 1
                state.lastJob += 1
                let number = state.lastJob
                state.waiting[number] = continuation
                queue.async { [self] in self.takeTurn(ofAbandonable: number, job, handingOffThrough: handoff) }
                return true
            }
            if !isSubmitted { continuation.resume() }
        }
        return handoff.withLock { $0.take() }
    }

    /// On the queue: runs abandonable job `number` unless it was abandoned, and hands its result
    /// to its waiter unless it was abandoned meanwhile.
    private func takeTurn<Value: Sendable>(
        ofAbandonable number: UInt64, _ job: @Sendable () -> Value, handingOffThrough handoff: Locked<Value?>
    ) {
        // Abandoned before its turn: its waiter was resumed already, and wants nothing.
        let isWaited = state.withLock { state in
            guard state.waiting[number] != nil else {
                state.pendingJobs -= 1
                return false
            }
            return true
        }
        guard isWaited else { return }
        let result = job()
        // Abandoned while it ran: its waiter was resumed already, and gets nothing.
        let waiter = state.withLock { state in
            state.pendingJobs -= 1
            return state.waiting.removeValue(forKey: number).map { waiter in
                handoff.withLock { $0 = result }
                return waiter
            }
        }
        waiter?.resume()
    }

    /// Runs `body` unless ``abandon()`` was called, holding the lock that ``abandon()`` takes:
    /// a job's last step that must not happen once ``abandon()`` has returned (publish what it
    /// built). Either `body` runs to its end before ``abandon()`` returns, or not at all.
    ///
    /// `body` must be short (a few assignments) and must not use this worker: it holds up
    /// every submission and ``abandon()`` while it runs.
    ///
    /// - Returns: What `body` returned, or `nil` if the worker was abandoned.
    package func unlessAbandoned<Value>(_ body: () -> Value) -> Value? {
        state.withLock { $0.isAbandoned ? nil : body() }
    }

    /// Stops waiting for every abandonable job, now and from now on: each of their waiters
    /// gets `nil` at once; a job that runs goes on and its result is dropped; jobs waiting for
    /// their turn never run, and later ones are not run at all. Jobs submitted with
    /// ``run(_:)`` are not concerned. Calling it again does nothing more.
    package func abandon() {
        let waiters = state.withLock { state in
            state.isAbandoned = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}
