package import Environments

/// What started a reload: one word, the same in the journal (`CONFIG_TRIGGER=`), the state
/// file, the history, the control socket, `STATUS=` and the metrics' `trigger` label: the
/// daemon's own `signal`, `file` and `control`, or a `ConfigurationSource`'s name (`fleet`
/// for the etcd fleet). Journal entries written before 0.2.0 said `file-change`, `api` and
/// `etcd` for `file`, `control` and `fleet`; `envctl history` reads both.
package struct ReloadTrigger: RawRepresentable, Sendable, Hashable {
    /// The word.
    package var rawValue: String

    /// The trigger named `rawValue`.
    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A reload that `source` asked for: its name, or `source` for a name outside the rules
    /// (`ConfigurationSource.name`).
    package init(_ source: some ConfigurationSource) {
        rawValue = source.triggerName
    }

    /// `SIGHUP`: `kill -HUP`, or `systemctl reload` of a unit without `ExecReload=`
    /// (`Type=notify-reload`).
    package static let signal = ReloadTrigger(rawValue: "signal")
    /// A configuration file or drop-in changed on disk.
    package static let file = ReloadTrigger(rawValue: "file")
    /// The application called ``ConfigurationReloader/reload(trigger:callerUID:callerUnit:revision:)``
    /// itself, or a control call did (`envctl reload`, so `systemctl reload` with it as
    /// `ExecReload=`).
    package static let control = ReloadTrigger(rawValue: "control")
    /// The etcd fleet's source (`EnvironmentsEtcd`), by its name.
    package static let fleet = ReloadTrigger(rawValue: "fleet")
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
    /// The revision of a source's documents (etcd's, for the fleet): `CONFIG_FLEET_REVISION`
    /// in the journal and `fleetRevision` in the history, names kept from when the fleet was
    /// the one source (other versions read them).
    package var revision: Int64?

    /// What `trigger` started, asked for by `callerUID` in `callerUnit`, at a source's `revision`.
    package init(trigger: ReloadTrigger, callerUID: UInt32? = nil, callerUnit: String? = nil, revision: Int64? = nil) {
        self.trigger = trigger
        self.callerUID = callerUID
        self.callerUnit = callerUnit
        self.revision = revision
    }
}
