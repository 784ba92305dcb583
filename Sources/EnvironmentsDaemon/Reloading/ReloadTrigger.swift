/// What started a reload: one word, the same in the journal (`CONFIG_TRIGGER=`), the state
/// file, the history, the control socket and the metrics' `trigger` label. Journal entries
/// written before 0.2.0 said `file-change`, `api` and `etcd` for `file`, `control` and
/// `fleet`; `envctl history` reads both.
package enum ReloadTrigger: String, Sendable, Hashable {
    /// `SIGHUP`: `kill -HUP`, or `systemctl reload` of a unit without `ExecReload=`
    /// (`Type=notify-reload`).
    case signal
    /// A configuration file or drop-in changed on disk.
    case file
    /// The application called ``ConfigurationReloader/reload(trigger:callerUID:callerUnit:fleetRevision:)``
    /// itself, or a control call did (`envctl reload`, so `systemctl reload` with it as
    /// `ExecReload=`).
    case control
    /// The fleet configuration in etcd changed (`EnvironmentsEtcd`).
    case fleet
}

/// What started a reload, and who or what asked: the history (`envctl history`) and the
/// journal's `CONFIG_TRIGGER`, `CONFIG_CALLER_UID`, `CONFIG_CALLER_UNIT` and `CONFIG_FLEET_REVISION`
/// tell it.
package struct ReloadCause: Sendable, Hashable {
    /// What started it.
    package var trigger: ReloadTrigger
    /// A control call's caller (`SO_PEERCRED`).
    package var callerUID: UInt32?
    /// The systemd service unit a control call's caller runs in (its control group): the
    /// daemon's own for its `ExecReload=` (`systemctl reload`).
    package var callerUnit: String?
    /// A fleet change's etcd revision.
    package var fleetRevision: Int64?

    /// The trigger of the load at start, in the history and the journal.
    package static let startTrigger = "start"
}
