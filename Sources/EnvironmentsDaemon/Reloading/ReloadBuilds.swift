import Dispatch
@_spi(Integrations) import Environments
import Foundation
@_spi(Integrations) import Locking

/// Runs the daemon's builds of the configuration (reading, parsing, merging and interpolating
/// the files, reading credential files, and the application's `validate`) on a dispatch queue
/// of their own, never on Swift's cooperative pool, whose few threads all the program's async
/// code shares; and lets a stopping service stop waiting for a reload's build.
///
/// A build may take long: hostile input, a slow file system, a `validate` that asks a server.
/// Its result comes back through a continuation, so the caller's thread (and the reloader's
/// actor, and so the control socket, the signal handling and the stop) is free meanwhile.
/// The queue is serial: builds run one at a time, in the order they were asked for, so a
/// `Check` asked for after a reload judges the configuration that reload left.
///
/// ``abandon()`` resumes every reload's waiter at once with `nil`; a build that is still
/// running goes on, on its thread, but never publishes: its snapshot is published only through
/// a gate that holds this type's lock and checks that nothing was abandoned, so once
/// ``abandon()`` returns, no reload takes effect.
final class ReloadBuilds: Sendable {
    private struct State {
        var isAbandoned = false
        var nextID: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let queue = DispatchQueue(label: "EnvironmentsDaemon.reload")
    private let state = Locked(State())

    /// Whether ``abandon()`` was called.
    var isAbandoned: Bool { state.withLock { $0.isAbandoned } }

    /// Reloads `environment` (``Environment/reload()``) on the queue and waits for the result.
    ///
    /// - Returns: The environment's outcome or the error that rejected the build, or `nil` if
    ///   the builds were abandoned before it was published (nothing changed then).
    func reload(_ environment: Environment) async -> Result<ReloadOutcome, EnvironmentError>? {
        await onQueue(abandonable: true) { () -> Result<ReloadOutcome, EnvironmentError>? in
            do throws(EnvironmentError) {
                return try environment.reload { publish in
                    self.state.withLock { $0.isAbandoned ? nil : publish() }
                }.map(Result.success)
            } catch {
                return .failure(error)
            }
        } ?? nil
    }

    /// What a `Check` came to: the configuration in use when it ran, and what a reload would
    /// have built instead, or the error that would have rejected it.
    typealias CheckOutcome = (current: EnvironmentSnapshot, built: Result<EnvironmentSnapshot, EnvironmentError>)

    /// Builds the configuration as a reload would, with `candidates` read in place of the files
    /// at their paths (``Environment/check(candidates:)``), on the queue, and waits for it: the
    /// control socket's `Check`. Nothing is published, so nothing is abandoned either.
    func check(_ environment: Environment, candidates: [String: Data]) async -> CheckOutcome {
        let outcome = await onQueue(abandonable: false) { () -> CheckOutcome in
            let current = environment.snapshot
            return (current, Result { () throws(EnvironmentError) in try environment.check(candidates: candidates) })
        }
        guard let outcome else { preconditionFailure("a check is never abandoned") }
        return outcome
    }

    /// Runs `work` on the queue and waits for its result; `nil` if `abandonable` and
    /// ``abandon()`` came first.
    ///
    /// The result passes from the queue's thread to the waiter through this type's lock, not as
    /// the continuation's value: the lock orders everything `work` wrote (a snapshot built on
    /// the queue) before the waiter's reads in a way every checker sees. ThreadSanitizer does
    /// not see the ordering of a continuation resumed from a dispatch thread onto an actor, and
    /// reported the reloader's first read of a new snapshot as a race.
    private func onQueue<Value: Sendable>(
        abandonable: Bool, _ work: @escaping @Sendable () -> Value
    ) async -> Value? {
        let handoff = Locked<Value?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = state.withLock { state -> UInt64? in
                guard abandonable else { return 0 }
                guard !state.isAbandoned else { return nil }
                state.nextID += 1
                state.waiting[state.nextID] = continuation
                return state.nextID
            }
            guard let id else {
                continuation.resume()
                return
            }
            queue.async {
                let result = work()
                guard abandonable else {
                    handoff.withLock { $0 = result }
                    continuation.resume()
                    return
                }
                // Abandoned meanwhile: the waiter was resumed already, and gets nothing.
                let waiter = self.state.withLock { state in
                    state.waiting.removeValue(forKey: id).map { waiter in
                        handoff.withLock { $0 = result }
                        return waiter
                    }
                }
                waiter?.resume()
            }
        }
        return handoff.withLock { $0.take() }
    }

    /// Stops waiting for every reload's build, now and from now on: each waiter gets `nil`, and
    /// no build that is running or comes later publishes its snapshot.
    func abandon() {
        let waiters = state.withLock { state in
            state.isAbandoned = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}
