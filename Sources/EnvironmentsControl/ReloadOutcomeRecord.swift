/// What one load or reload attempt of a daemon came to: the one type that every surface which
/// tells about an attempt uses (the daemon's record of it, the state file, the control
/// interface's `ReloadVerdict` and `HistoryEntry`, the reload metrics' `result` label, and a
/// fleet host's status key), so that none of them can name it differently. An application sees
/// the public `ReloadOutcome` instead (`applied` with the change, or `unchanged`), which carries
/// the snapshots.
///
/// Its raw values are the wire strings: the state file, the control interface and a fleet's
/// status keys are read by other versions, so they never change. Each surface writes only the
/// cases it has always written:
///
/// | surface | cases |
/// |---|---|
/// | the daemon's record of an attempt | every case but `pending-restart` |
/// | state file `lastReload.outcome`, `ReloadVerdict.outcome`, metrics `result` | `applied`, `unchanged`, `rejected` (``verdict``) |
/// | `HistoryEntry.outcome` | `loaded`, `applied`, `unchanged`, `rejected` (an abandoned reload is not listed) |
/// | a fleet host's `last.outcome` | `applied`, `unchanged`, `pending-restart`, `rejected` |
package enum ReloadOutcomeRecord: String, Codable, Sendable {
    /// The configuration loaded when the daemon started.
    case loaded
    /// A reload applied a new configuration.
    case applied
    /// A reload found nothing to change.
    case unchanged
    /// A fleet change was applied, and restart-only settings wait for a restart (a fleet
    /// host's status only).
    case pendingRestart = "pending-restart"
    /// A reload was rejected; the last good configuration stayed.
    case rejected
    /// A reload was given up because the service stops; the configuration stayed. Never on a
    /// wire: a verdict says ``rejected`` (``verdict``).
    case abandoned

    /// The outcome as a verdict tells it (the state file, the control interface's
    /// `ReloadVerdict`, the metrics' `result` label): ``applied``, ``unchanged`` or
    /// ``rejected``. The load at start reads `applied`; an abandoned reload, `rejected`.
    package var verdict: ReloadOutcomeRecord {
        switch self {
        case .loaded, .applied, .pendingRestart: .applied
        case .unchanged: .unchanged
        case .rejected, .abandoned: .rejected
        }
    }
}
