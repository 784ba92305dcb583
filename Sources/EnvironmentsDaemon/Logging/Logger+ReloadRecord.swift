import Environments
import EnvironmentsControl
import Logging

extension Logger {
    /// Logs `record`: the load at start and an applied reload at `info` (a reload with each
    /// changed key's value before and after), each key that waits for a restart at `warning`,
    /// a rejection at `error` with the file, line and key it names, an abandoned reload at
    /// `notice`. A reload that changed nothing is not logged here: the journal tells it (or,
    /// without a journal, ``ConfigurationReporter`` logs it).
    func log(_ record: ReloadRecord) {
        let snapshot = record.configuration
        switch record.outcome {
        case .loaded:
            info(
                "configuration loaded",
                metadata: [
                    "environment": "\(snapshot.environmentName)", "generation": "\(snapshot.generation)",
                    "files": "\(Self.bounded(snapshot.files, SettingsListing.maximumFiles).joined(separator: ", "))",
                ])
        case .applied, .pendingRestart:
            guard let change = record.change else { return }
            logChange(change, trigger: record.triggerName)
            for key in record.pendingRestartKeys {
                let current = snapshot.configuredValue(forKey: key)?.displayValue() ?? "<unset>"
                let waiting = snapshot.pendingRestart[key]!.displayValue()
                warning(
                    "'\(key)' changed to \(waiting) but can only change on restart; keeping \(current) (pending restart)",
                    metadata: ["config_key": "\(key)"])
            }
        case .unchanged:
            break
        case .rejected:
            guard let error = record.error else { return }
            var metadata: Logger.Metadata = ["trigger": "\(record.triggerName)", "error_code": "\(error.code)"]
            if let file = error.file { metadata["config_file"] = "\(file)" }
            if let line = error.line { metadata["config_line"] = "\(line)" }
            if let key = error.key { metadata["config_key"] = "\(key)" }
            self.error(
                "configuration reload rejected, keeping generation \(record.generation): \(error)", metadata: metadata)
        case .abandoned:
            notice(
                "reload abandoned: the service is stopping; keeping generation \(record.generation)",
                metadata: ["trigger": "\(record.triggerName)"])
        }
    }

    /// An applied reload: the changed keys, with their values before and after, at most
    /// ``SettingsListing/maximumChangedKeys`` of them (values cut as the journal's listing cuts
    /// them) and a count of the rest.
    private func logChange(_ change: EnvironmentChange, trigger: String) {
        let snapshot = change.current
        let keys = Self.bounded(change.changedKeys, SettingsListing.maximumChangedKeys)
        let changes = change.changedKeys.prefix(SettingsListing.maximumChangedKeys).map { key -> String in
            let old = change.previous.configuredValue(forKey: key).map { SettingsListing.cut($0.displayValue()) }
            let new = snapshot.configuredValue(forKey: key).map { SettingsListing.cut($0.displayValue()) }
            return "\(key): \(old ?? "<unset>") -> \(new ?? "<unset>")"
        }
        // Values the same, sources or pending restarts not: say what changed rather than "changed: ".
        let summary =
            change.changedKeys.isEmpty
            ? "no value changed (sources or pending restarts did)"
            : "changed: \(keys.joined(separator: ", "))"
        info(
            "configuration reloaded: generation \(snapshot.generation), \(summary)",
            metadata: [
                "trigger": "\(trigger)", "environment": "\(snapshot.environmentName)",
                "generation": "\(snapshot.generation)", "changed_keys": "\(keys.joined(separator: ","))",
                "changes": "\(changes.joined(separator: "; "))",
            ])
    }

    /// The first `limit` of `items`, and "N more" when there are more.
    private static func bounded(_ items: [String], _ limit: Int) -> [String] {
        items.count > limit ? items.prefix(limit) + ["\(items.count - limit) more"] : items
    }
}
