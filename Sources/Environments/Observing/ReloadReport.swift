#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// One load or reload of a running daemon: what it came to, what started it, and what it left.
///
/// The one value a daemon makes of each attempt. Everything that tells about it is rendered
/// from this value, each in one place next to its surface: the control socket's `ReloadVerdict`
/// and `HistoryEntry` (`EnvironmentsControl`), the state file's `lastReload`, the journal's
/// entries, the log, the metrics and `STATUS=` (`EnvironmentsDaemon`), a fleet host's status key
/// (`EnvironmentsEtcd`). `envctl` reads the control socket's forms back into it. A field added
/// here fails `ReloadReportSurfaceTests` until each surface shows it or says why not.
///
/// `EnvironmentService.reload(from:revision:)` returns it to a `ConfigurationSource`, and an
/// observer added with `EnvironmentService.onReload(_:)` receives each. An application that
/// reloads an ``Environment`` itself gets a ``ReloadOutcome`` instead, with the snapshots.
public struct ReloadReport: Sendable, Hashable {
    /// What a load or reload came to.
    public enum Outcome: Sendable, Hashable {
        /// The configuration loaded when the service started.
        case loaded
        /// A reload applied a new configuration.
        case applied
        /// A reload found nothing to change.
        case unchanged
        /// A reload was rejected (``ReloadReport/error`` says why); the last good
        /// configuration stays.
        case rejected
        /// A reload was given up because the service stops; the configuration stays.
        case abandoned
    }

    /// What it came to.
    public var outcome: Outcome
    /// What started it, as the journal's `CONFIG_TRIGGER` says: `start` for the load at start,
    /// `signal`, `file`, `control`, or a source's `ConfigurationSource.name`.
    public var trigger: String
    /// The revision the source that started it gave (`EnvironmentService.reload(from:revision:)`).
    public var revision: Int64?
    /// The configuration generation in use afterwards: the new one when applied, else the one
    /// kept.
    public var generation: UInt64
    /// The environment the daemon runs.
    public var environment: String
    /// Keys that cannot change without a restart whose new values wait for one, sorted.
    public var pendingRestart: [String]
    /// Why the reload was rejected, as the journal has it: with its file, line and key, secret
    /// values redacted. It may quote values that are not secret: what a source sends off the
    /// host should be made of its ``EnvironmentError/code``, ``EnvironmentError/file``,
    /// ``EnvironmentError/line`` and ``EnvironmentError/key`` alone.
    public var error: EnvironmentError?

    /// The instance the daemon runs, if any.
    package var instance: String?
    /// A control call's caller (`SO_PEERCRED`).
    package var callerUID: UInt32?
    /// The systemd service unit a control call's caller runs in: the daemon's own for its
    /// `ExecReload=` (`systemctl reload`).
    package var callerUnit: String?
    /// The keys whose values changed (an applied reload): every one, in the build's order; read
    /// back from a history entry, the ones it lists (``changedKeyCount`` counts them all).
    package var changedKeys: [String]
    /// How many keys changed.
    package var changedKeyCount: Int
    /// The changed keys' values before, as `envctl show` prints them (secrets `<redacted>`); a
    /// key that was not set has none.
    package var previousValues: [String: String]
    /// The changed keys' values after, as ``previousValues``.
    package var values: [String: String]
    /// Whether the values were left out, too large to keep (``previousValues`` and ``values``
    /// are empty then).
    package var valuesOmitted: Bool
    /// `CLOCK_MONOTONIC` (µs) when the attempt started reading files.
    package var startedMonotonicMicroseconds: UInt64
    /// `CLOCK_MONOTONIC` (µs) when it ended.
    package var finishedMonotonicMicroseconds: UInt64
    /// When it ended, on the wall clock.
    package var finished: Date
    /// The daemon's process id.
    package var pid: Int32?

    /// A report with each field given; a field not given is empty.
    package init(
        outcome: Outcome, trigger: String, revision: Int64? = nil, generation: UInt64, environment: String,
        pendingRestart: [String] = [], error: EnvironmentError? = nil, instance: String? = nil,
        callerUID: UInt32? = nil, callerUnit: String? = nil, changedKeys: [String] = [], changedKeyCount: Int? = nil,
        previousValues: [String: String] = [:], values: [String: String] = [:], valuesOmitted: Bool = false,
        startedMonotonicMicroseconds: UInt64 = 0, finishedMonotonicMicroseconds: UInt64 = 0,
        finished: Date = Date(timeIntervalSince1970: 0), pid: Int32? = nil
    ) {
        self.outcome = outcome
        self.trigger = trigger
        self.revision = revision
        self.generation = generation
        self.environment = environment
        self.pendingRestart = pendingRestart
        self.error = error
        self.instance = instance
        self.callerUID = callerUID
        self.callerUnit = callerUnit
        self.changedKeys = changedKeys
        self.changedKeyCount = changedKeyCount ?? changedKeys.count
        self.previousValues = previousValues
        self.values = values
        self.valuesOmitted = valuesOmitted
        self.startedMonotonicMicroseconds = startedMonotonicMicroseconds
        self.finishedMonotonicMicroseconds = finishedMonotonicMicroseconds
        self.finished = finished
        self.pid = pid
    }
}

extension ReloadReport {
    /// The trigger of the load at start.
    package static let startTrigger = "start"

    /// What a verdict says it came to (the control socket's `ReloadVerdict`, the state file,
    /// the metrics' `result` label): ``Outcome/applied``, ``Outcome/unchanged`` or
    /// ``Outcome/rejected``. The load at start reads `applied`; an abandoned reload, `rejected`.
    package var verdict: Outcome {
        switch outcome {
        case .loaded, .applied: .applied
        case .unchanged: .unchanged
        case .rejected, .abandoned: .rejected
        }
    }

    /// Whether the configuration in use is one this attempt loaded or applied.
    package var tookEffect: Bool { verdict == .applied }

    /// Why an abandoned reload did nothing, as the state file and a verdict say it.
    package var abandonedReason: String {
        "the service is stopping: the reload was abandoned, generation \(generation) stays"
    }

    /// The error a verdict gives: the rejection's, or for an abandoned reload one that says so.
    package var verdictError: EnvironmentError? {
        guard outcome == .abandoned else { return error }
        var error = EnvironmentError(.init(named: "unknown"), abandonedReason)
        error.toldDescription = abandonedReason
        return error
    }
}
