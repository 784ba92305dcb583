public import Environments
import TextEscaping

/// What a `ConfigurationSource` asks of the running service: a reload when its documents
/// changed, a note in `STATUS=`, and the outcome of every load and reload. The article "Adding
/// a source" in the Environments documentation walks through one.
extension EnvironmentService {
    /// Reloads the configuration because `source`'s documents changed, and returns once the
    /// reload is done: applied, unchanged, or rejected with the last good configuration kept.
    ///
    /// It is the same reload as one a file change starts (`RELOADING=1` and `READY=1` once the
    /// service is ready, the journal's entry, the history, the state file, the metrics,
    /// observers), one at a time with the others; only its trigger differs:
    /// `source`'s `ConfigurationSource.name` (`CONFIG_TRIGGER=fleet`,
    /// `Reloading configuration (fleet)`, `environments_reloads_total{trigger="fleet"}`).
    /// The build (every source's `ConfigurationSource.documents()`, the files, the
    /// validation) runs on a thread of the library's own, never on Swift's cooperative pool.
    ///
    /// - Parameters:
    ///   - source: The source whose documents changed; it need not be the only one, nor even
    ///     one of the environment's (`EnvironmentOptions.sources`), but that is what it is for.
    ///   - revision: What identifies the new documents, if the source has such a number (etcd's
    ///     revision): the journal's `CONFIG_FLEET_REVISION`, the history's `fleetRevision` and
    ///     `ReloadReport.revision` (the first two named when the fleet was the one source).
    /// - Returns: The report of the reload. After the service began to stop, its outcome is
    ///   `ReloadReport.Outcome.abandoned` at once.
    @discardableResult
    public func reload(from source: some ConfigurationSource, revision: Int64? = nil) async -> ReloadReport {
        await reloader.reload(from: source, revision: revision)
    }

    /// Sets, or with `nil` clears, `source`'s note in `STATUS=` (which `systemctl status`
    /// shows), after the environment and generation: for a state an operator should see,
    /// such as `etcd unreachable, fleet configuration at revision 42`. Sent at once when the
    /// service is ready, and with every later `STATUS=`.
    ///
    /// Control characters in `note` are escaped, and it is cut to 200 characters.
    public func setStatusNote(_ note: String?, from source: some ConfigurationSource) async {
        let shown = note.map { note in
            let escaped = ControlCharacters.escaped(note)
            return escaped.count > 200 ? String(escaped.prefix(199)) + "…" : escaped
        }
        await reloader.setStatusNote(shown, for: source.triggerName)
    }

    /// Calls `observer` with the report of every load and reload from now on, and at once with
    /// the last one before (the load at start, once the service runs), whatever started them:
    /// a source learns there whether the configuration in use is built from its documents.
    ///
    /// `observer` runs on the service's reloader while it holds its turn, so it sees the
    /// reports in order and before the next reload starts: it must return at once (record
    /// what it needs under a lock, hand the rest to a task of its own), and must not wait for
    /// the service.
    public func onReload(_ observer: @escaping @Sendable (ReloadReport) -> Void) async {
        await reloader.addRenderer(observer)
    }
}
