public import Environments
import EnvironmentsControl

/// One load or reload, as a `ConfigurationSource` learns of it: what
/// ``EnvironmentService/reload(from:revision:)`` returns, and what an observer added with
/// ``EnvironmentService/onReload(_:)`` receives.
///
/// It is rendered from the same record as the journal's entry, the state file and `STATUS=`,
/// so what a source reports elsewhere (a fleet host's status key) cannot disagree with them.
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
    /// The revision the source that started it gave (``EnvironmentService/reload(from:revision:)``).
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
    /// host should be made of its `EnvironmentError.code`, `EnvironmentError.file`,
    /// `EnvironmentError.line` and `EnvironmentError.key` alone.
    public var error: EnvironmentError?

    init(_ record: ReloadRecord) {
        outcome =
            switch record.outcome {
            case .loaded: .loaded
            case .applied, .pendingRestart: .applied
            case .unchanged: .unchanged
            case .rejected: .rejected
            case .abandoned: .abandoned
            }
        trigger = record.triggerName
        revision = record.cause?.revision
        generation = record.generation
        environment = record.configuration.environmentName
        pendingRestart = record.pendingRestartKeys
        error = record.error
    }
}
