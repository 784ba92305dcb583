import Environments
import EnvironmentsControl
import SystemdSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One load or reload attempt, built once when it ends: everything the daemon tells about it
/// (the log, the journal, the history, the state file, the metrics, `STATUS=` and the control
/// socket's verdict) is rendered from this value, so they cannot disagree.
struct ReloadRecord: Sendable {
    /// What the attempt came to: `loaded`, `applied` (``change`` says what changed),
    /// `unchanged`, `rejected` (``error`` says why; the configuration stays) or `abandoned`
    /// (the service stops; the configuration stays). Every output renders it from here.
    var outcome: ReloadOutcomeRecord
    /// What started it and who asked; `nil` for the load at start.
    var cause: ReloadCause?
    /// The configuration in use afterwards: the new one when applied, else the one kept.
    var configuration: EnvironmentSnapshot
    /// For an applied reload, the configuration before and after, and the keys whose values changed.
    var change: EnvironmentChange?
    /// Why a reload was rejected, with the file, line and key it names.
    var error: EnvironmentError?
    /// `CLOCK_MONOTONIC` (µs) when the attempt started.
    var startedMonotonicMicroseconds: UInt64
    /// `CLOCK_MONOTONIC` (µs) when it ended.
    var finishedMonotonicMicroseconds: UInt64
    /// When it ended, on the wall clock.
    var finished: Date

    /// Creates a record of an attempt that ends now.
    init(
        _ outcome: ReloadOutcomeRecord, configuration: EnvironmentSnapshot, cause: ReloadCause?,
        startedMonotonicMicroseconds: UInt64, change: EnvironmentChange? = nil, error: EnvironmentError? = nil
    ) {
        self.outcome = outcome
        self.cause = cause
        self.configuration = configuration
        self.change = change
        self.error = error
        self.startedMonotonicMicroseconds = startedMonotonicMicroseconds
        finishedMonotonicMicroseconds = MonotonicClock.nowMicroseconds()
        finished = Date()
    }

    /// The record of what a build came to (``ReloadBuilds``): applied, unchanged or rejected,
    /// keeping `current` when rejected.
    init(
        _ built: Result<ReloadOutcome, EnvironmentError>, keeping current: @autoclosure () -> EnvironmentSnapshot,
        cause: ReloadCause, startedMonotonicMicroseconds started: UInt64
    ) {
        switch built {
        case .success(.applied(let change)):
            self.init(
                .applied, configuration: change.current, cause: cause, startedMonotonicMicroseconds: started,
                change: change)
        case .success(.unchanged(let snapshot)):
            self.init(.unchanged, configuration: snapshot, cause: cause, startedMonotonicMicroseconds: started)
        case .failure(let error):
            self.init(
                .rejected, configuration: current(), cause: cause, startedMonotonicMicroseconds: started, error: error)
        }
    }

    /// The generation in use afterwards.
    var generation: UInt64 { configuration.generation }

    /// The trigger's name in the history, the journal and the state file: `start` for the load
    /// at start.
    var triggerName: String { cause?.trigger.rawValue ?? ReloadCause.startTrigger }

    /// The keys whose values changed (applied reloads only), in the build's order.
    var changedKeys: [String] { change?.changedKeys ?? [] }

    /// Restart-only keys whose new values wait for a restart, sorted.
    var pendingRestartKeys: [String] { configuration.pendingRestart.keys.sorted() }

    /// Whether the configuration in use is one this attempt loaded or applied.
    var tookEffect: Bool { outcome.verdict == .applied }

    /// Why an abandoned reload did nothing.
    var abandonedReason: String {
        "the service is stopping: the reload was abandoned, generation \(generation) stays"
    }
}
