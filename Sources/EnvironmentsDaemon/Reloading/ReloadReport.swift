@_spi(Integrations) import Environments
@_spi(Integrations) import EnvironmentsControl

/// One load or reload as a renderer outside this module sees it
/// (``ConfigurationReloader/addRenderer(_:)``): a rendering of the ``ReloadRecord``, like the
/// journal's entry and the state file, so that what a fleet's status key says cannot disagree
/// with them.
@_spi(Integrations) public struct ReloadReport: Sendable, Hashable {
    /// The verdict, as the state file and the control socket give it (the load at start reads
    /// `applied`).
    @_spi(Integrations) public var verdict: ReloadState.LastReload
    /// Whether this is the load at start.
    @_spi(Integrations) public var isStart: Bool
    /// The fleet revision that started it, for a reload a fleet change started.
    @_spi(Integrations) public var fleetRevision: Int64?
    /// Restart-only keys whose new values wait for a restart.
    @_spi(Integrations) public var pendingRestart: [String]
    /// The environment the daemon runs.
    @_spi(Integrations) public var environment: String
    /// The instance it runs, if any.
    @_spi(Integrations) public var instance: String?
    /// The error that rejected the reload, in this process only (it may quote values): what
    /// leaves the host is made from its code and location alone.
    @_spi(Integrations) public var rejection: EnvironmentError?

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
