package import Environments
import SystemdSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How the daemon makes the one `ReloadReport` of each attempt, when it ends: every output
/// (the log, the journal, the history, the state file, the metrics, `STATUS=`, the control
/// socket's verdict, a source's observers) renders this value, so they cannot disagree.
extension ReloadReport {
    /// The report of an attempt that ends now: `outcome`, after which `configuration` is in
    /// use; `change` for an applied reload, `error` for a rejected one.
    package init(
        _ outcome: Outcome, configuration: EnvironmentSnapshot, cause: ReloadCause?,
        startedMonotonicMicroseconds: UInt64, change: EnvironmentChange? = nil, error: EnvironmentError? = nil
    ) {
        self.init(
            outcome: outcome, trigger: cause?.trigger.rawValue ?? Self.startTrigger, revision: cause?.revision,
            generation: configuration.generation, environment: configuration.environmentName,
            pendingRestart: configuration.pendingRestart.keys.sorted(), error: error,
            instance: configuration.instanceName, callerUID: cause?.callerUID, callerUnit: cause?.callerUnit,
            changedKeys: change?.changedKeys ?? [], startedMonotonicMicroseconds: startedMonotonicMicroseconds,
            finishedMonotonicMicroseconds: MonotonicClock.nowMicroseconds(), finished: Date(), pid: getpid())
        if let change { keepValues(of: change) }
    }

    /// The report of what a build came to (``ReloadBuilds``): applied, unchanged or rejected,
    /// keeping `current` when rejected.
    package init(
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

    /// About how many bytes of text the changed keys' values take at most: beyond, only the
    /// keys are kept (``valuesOmitted``), so that a reload that changes a million keys makes a
    /// small report.
    package static let maximumValueBytes = 128 << 10

    /// Keeps the changed keys' values before and after, as `envctl show` prints them (secrets
    /// `<redacted>`), unless they take more than ``maximumValueBytes``.
    private mutating func keepValues(of change: EnvironmentChange) {
        var size = 0
        for key in change.changedKeys {
            let previous = change.previous.configuredValue(forKey: key)?.displayValue()
            let value = change.current.configuredValue(forKey: key)?.displayValue()
            size += key.utf8.count + (previous?.utf8.count ?? 0) + (value?.utf8.count ?? 0) + 40
            guard size <= Self.maximumValueBytes else {
                previousValues = [:]
                values = [:]
                valuesOmitted = true
                return
            }
            previousValues[key] = previous
            values[key] = value
        }
    }
}
