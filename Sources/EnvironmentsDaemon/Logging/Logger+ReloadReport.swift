package import Environments
import EnvironmentsControl
package import Logging

extension Logger {
    /// Logs `report`, after which `snapshot` is in use (`previous` was, before an applied
    /// reload): the load at start and an applied reload at `info` (a reload with each
    /// changed key's value before and after), each key that waits for a restart at `warning`,
    /// a rejection at `error` with the file, line and key it names, an abandoned reload at
    /// `notice`. A reload that changed nothing is not logged here: the journal tells it (or,
    /// without a journal, ``ConfigurationReporter`` logs it).
    package func log(
        _ report: ReloadReport, configuration snapshot: EnvironmentSnapshot, previous: EnvironmentSnapshot?
    ) {
        switch report.outcome {
        case .loaded:
            info(
                "configuration loaded",
                metadata: [
                    "environment": "\(report.environment)", "generation": "\(report.generation)",
                    "files": "\(Self.bounded(snapshot.files, SettingsListing.maximumFiles).joined(separator: ", "))",
                ])
        case .applied:
            logChange(report, snapshot, previous: previous)
            for key in report.pendingRestart {
                let current = snapshot.configuredValue(forKey: key)?.displayValue() ?? "<unset>"
                let waiting = snapshot.pendingRestart[key].map { $0.displayValue() } ?? "<unset>"
                warning(
                    "'\(key)' changed to \(waiting) but can only change on restart; keeping \(current) (pending restart)",
                    metadata: ["config_key": "\(key)"])
            }
        case .unchanged:
            break
        case .rejected:
            guard let error = report.error else { return }
            var metadata: Logger.Metadata = ["trigger": "\(report.trigger)", "error_code": "\(error.code)"]
            if let file = error.file { metadata["config_file"] = "\(file)" }
            if let line = error.line { metadata["config_line"] = "\(line)" }
            if let key = error.key { metadata["config_key"] = "\(key)" }
            self.error(
                "configuration reload rejected, keeping generation \(report.generation): \(error)", metadata: metadata)
        case .abandoned:
            notice(
                "reload abandoned: the service is stopping; keeping generation \(report.generation)",
                metadata: ["trigger": "\(report.trigger)"])
        }
    }

    /// An applied reload: the changed keys, with their values before and after, at most
    /// ``SettingsListing/maximumChangedKeys`` of them (values cut as the journal's listing cuts
    /// them) and a count of the rest.
    private func logChange(_ report: ReloadReport, _ snapshot: EnvironmentSnapshot, previous: EnvironmentSnapshot?) {
        let keys = Self.bounded(report.changedKeys, SettingsListing.maximumChangedKeys)
        let changes = report.changedKeys.prefix(SettingsListing.maximumChangedKeys).map { key -> String in
            let old = previous?.configuredValue(forKey: key).map { SettingsListing.cut($0.displayValue()) }
            let new = snapshot.configuredValue(forKey: key).map { SettingsListing.cut($0.displayValue()) }
            return "\(key): \(old ?? "<unset>") -> \(new ?? "<unset>")"
        }
        // Values the same, sources or pending restarts not: say what changed rather than "changed: ".
        let summary =
            report.changedKeys.isEmpty
            ? "no value changed (sources or pending restarts did)"
            : "changed: \(keys.joined(separator: ", "))"
        info(
            "configuration reloaded: generation \(report.generation), \(summary)",
            metadata: [
                "trigger": "\(report.trigger)", "environment": "\(report.environment)",
                "generation": "\(report.generation)", "changed_keys": "\(keys.joined(separator: ","))",
                "changes": "\(changes.joined(separator: "; "))",
            ])
    }

    /// The first `limit` of `items`, and "N more" when there are more.
    private static func bounded(_ items: [String], _ limit: Int) -> [String] {
        items.count > limit ? items.prefix(limit) + ["\(items.count - limit) more"] : items
    }
}
