#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `HistoryEntry` in the interface: one load or reload attempt of a running daemon, as
/// `envctl history` lists it. The daemon keeps its last ones (`History`); the journal keeps the
/// entries it wrote for each (`envctl history` reads them first).
package struct ReloadHistoryRecord: Codable, Sendable, Hashable {
    /// When the attempt finished, ISO 8601 with fractional seconds, in UTC.
    package var time: String
    /// What happened: `loaded`, `applied`, `unchanged` or `rejected` (an abandoned reload is
    /// not listed).
    package var outcome: ReloadOutcomeRecord
    /// The generation in use afterwards (for a rejected reload: the one kept).
    package var generation: Int
    /// The environment in use afterwards.
    package var environment: String
    /// The instance, if any.
    package var instance: String?
    /// What started it: `start`, `signal`, `file`, `control` (a control call or the
    /// application), `fleet` (a fleet change); before 0.2.0, `file-change`, `api`, `etcd`.
    package var trigger: String
    /// For a control call: the caller's uid (`SO_PEERCRED`).
    package var callerUID: Int?
    /// For a control call: the systemd service unit the caller ran in (its control group); the
    /// daemon's own unit for its `ExecReload=`, which `systemctl reload` runs.
    package var callerUnit: String?
    /// For a fleet change: the etcd revision of the fleet's documents.
    package var fleetRevision: Int?
    /// The changed keys, with their values before and after as `envctl show` prints them
    /// (secrets `<redacted>`); at most as many as fit the history's limits, in key order.
    package var changes: [SettingChangeRecord]
    /// How many keys changed (``changes`` may list fewer).
    package var changedKeyCount: Int
    /// Whether ``changes`` left out the values (too large to keep; the keys are still listed).
    package var valuesOmitted: Bool
    /// Why a rejected reload was rejected.
    package var error: ConfigurationErrorRecord?
    /// The daemon's process id (from the journal, which knows it; the daemon's own history is
    /// one process's).
    package var pid: Int?

    package init(
        time: String, outcome: ReloadOutcomeRecord, generation: Int, environment: String, instance: String? = nil,
        trigger: String, callerUID: Int? = nil, callerUnit: String? = nil, fleetRevision: Int? = nil,
        changes: [SettingChangeRecord] = [],
        changedKeyCount: Int = 0, valuesOmitted: Bool = false, error: ConfigurationErrorRecord? = nil, pid: Int? = nil
    ) {
        self.time = time
        self.outcome = outcome
        self.generation = generation
        self.environment = environment
        self.instance = instance
        self.trigger = trigger
        self.callerUID = callerUID
        self.callerUnit = callerUnit
        self.fleetRevision = fleetRevision
        self.changes = changes
        self.changedKeyCount = changedKeyCount
        self.valuesOmitted = valuesOmitted
        self.error = error
        self.pid = pid
    }

    /// What started the attempt, in words: `start`, `signal`, `file`, `systemctl reload
    /// (ExecReload=, uid 62506)` (a control call from `daemonUnit`, the daemon's own unit),
    /// `control from uid 0 in backup.service`... (another caller; `control by the application`
    /// without one), `fleet revision 42` (another source's: `NAME revision 42`). The names of entries written before 0.2.0
    /// (`file-change`, `api`, `etcd`) read as today's.
    package func triggerDescription(daemonUnit: String? = nil) -> String {
        switch trigger {
        case "control", "api":
            guard let callerUID else { return "control by the application" }
            if let callerUnit, callerUnit == daemonUnit {
                return "systemctl reload (ExecReload=, uid \(callerUID))"
            }
            return "control from uid \(callerUID)" + (callerUnit.map { " in \($0)" } ?? "")
        case "fleet", "etcd": return fleetRevision.map { "fleet revision \($0)" } ?? "fleet"
        case "file", "file-change": return "file"
        default: return fleetRevision.map { "\(trigger) revision \($0)" } ?? trigger
        }
    }
}

/// `SettingChange` in the interface: one changed key, with its values as `envctl show` prints
/// them (secrets `<redacted>`); a value is absent where the key was not set (or, with
/// `valuesOmitted`, not kept).
package struct SettingChangeRecord: Codable, Sendable, Hashable {
    package var key: String
    package var previous: String?
    package var value: String?

    package init(key: String, previous: String?, value: String?) {
        self.key = key
        self.previous = previous
        self.value = value
    }
}

/// The output of `History`.
package struct HistoryReply: Codable, Sendable, Hashable {
    /// Oldest first.
    package var entries: [ReloadHistoryRecord]
    /// How many entries the daemon keeps at most.
    package var limit: Int
    /// How many older entries it no longer has.
    package var dropped: Int

    package init(entries: [ReloadHistoryRecord], limit: Int, dropped: Int) {
        self.entries = entries
        self.limit = limit
        self.dropped = dropped
    }
}
