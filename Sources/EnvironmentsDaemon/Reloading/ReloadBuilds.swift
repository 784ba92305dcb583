import Environments
import ThreadBridge

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs the daemon's builds of the configuration (reading, parsing, merging and interpolating
/// the files, reading credential files, and the application's `validate`) on a serial queue of
/// their own (a `SerialWorker` labelled `EnvironmentsDaemon.reload`), never on Swift's
/// cooperative pool, whose few threads all the program's async code shares; and lets a
/// stopping service stop waiting for a reload's build.
///
/// A build may take long: hostile input, a slow file system, a `validate` that asks a server.
/// Its result comes back through the worker, so the caller's thread (and the reloader's actor,
/// and so the control socket, the signal handling and the stop) is free meanwhile. Builds run
/// one at a time, in the order they were asked for, so a `Check` asked for after a reload
/// judges the configuration that reload left.
///
/// ``abandon()`` resumes every reload's waiter at once with `nil`; a reload's build that is
/// still running goes on, on its thread, but never publishes, and one still waiting for its
/// turn never runs. A snapshot is published only through a gate that holds the worker's lock
/// and checks that nothing was abandoned (`SerialWorker.unlessAbandoned(_:)`), so once
/// ``abandon()`` returns, no reload takes effect. A `Check` publishes nothing and is never
/// abandoned.
final class ReloadBuilds: Sendable {
    private let worker = SerialWorker(label: "EnvironmentsDaemon.reload")

    /// Whether ``abandon()`` was called.
    var isAbandoned: Bool { worker.isAbandoned }

    /// Reloads `environment` (`Environment.reload()`) on the worker and waits for the result.
    ///
    /// - Returns: The environment's outcome or the error that rejected the build, or `nil` if
    ///   the builds were abandoned before it was published (nothing changed then).
    func reload(_ environment: Environment) async -> Result<ReloadOutcome, EnvironmentError>? {
        await worker.runAbandonable { [worker] () -> Result<ReloadOutcome, EnvironmentError>? in
            do throws(EnvironmentError) {
                return try environment.reload { publish in
                    worker.unlessAbandoned(publish)
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
    /// at their paths (`Environment.check(candidates:)`), on the worker, and waits for it: the
    /// control socket's `Check`. Nothing is published, so nothing is abandoned either.
    func check(_ environment: Environment, candidates: [String: Data]) async -> CheckOutcome {
        await worker.run { () -> CheckOutcome in
            let current = environment.snapshot
            return (current, Result { () throws(EnvironmentError) in try environment.check(candidates: candidates) })
        }
    }

    /// Stops waiting for every reload's build, now and from now on: each waiter gets `nil`, and
    /// no build that is running or comes later publishes its snapshot.
    func abandon() {
        worker.abandon()
    }
}
