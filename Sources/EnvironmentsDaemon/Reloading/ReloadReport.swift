import Environments
import EnvironmentsControl

/// One load or reload as a renderer outside this module sees it
/// (``ConfigurationReloader/addRenderer(_:)``): a rendering of the ``ReloadRecord``, like the
/// journal's entry and the state file, so that what a fleet's status key says cannot disagree
/// with them.
package struct ReloadReport: Sendable, Hashable {
    /// The verdict, as the state file and the control socket give it (the load at start reads
    /// `applied`).
    package var verdict: ReloadState.LastReload
    /// Whether this is the load at start.
    package var isStart: Bool
    /// The fleet revision that started it, for a reload a fleet change started.
    package var fleetRevision: Int64?
    /// Restart-only keys whose new values wait for a restart.
    package var pendingRestart: [String]
    /// The environment the daemon runs.
    package var environment: String
    /// The instance it runs, if any.
    package var instance: String?
    /// The error that rejected the reload, in this process only (it may quote values): what
    /// leaves the host is made from its code and location alone.
    package var rejection: EnvironmentError?

    init(_ record: ReloadRecord) {
        verdict = ReloadState.LastReload(record)
        isStart = record.outcome == .loaded
        fleetRevision = record.cause?.fleetRevision
        pendingRestart = record.pendingRestartKeys
        environment = record.configuration.environmentName
        instance = record.configuration.instanceName
        rejection = record.error
    }
}
