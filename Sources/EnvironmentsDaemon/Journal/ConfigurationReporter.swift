package import Environments
import EnvironmentsControl
package import Logging
package import SystemdSupport
import TextEscaping

/// Writes each load and reload (its `ReloadReport`) to the journal: the effective settings after
/// every applied load, the warnings, pending restarts, unchanged and rejected reloads, each with
/// its fixed `MESSAGE_ID`.
///
/// With a journal (`JournalLogHandler.Output.journal` or a socket) each event is one
/// structured entry with repeated fields; on standard error it becomes a log line, followed
/// by one log line per setting (a log entry is one line there, so that no key or value can
/// make a line of its own).
package struct ConfigurationReporter: Sendable {
    /// Where the entries go.
    let output: JournalLogHandler.Output
    /// The `SYSLOG_IDENTIFIER` of the entries.
    let identifier: String
    let logger: Logger
    /// The command that lists every setting, named where an entry lists only some.
    let showCommand: String
    /// The sender for a `.socket` output, opened once.
    private let socketSender: JournalSocketSender?

    /// Creates a reporter.
    package init(
        output: JournalLogHandler.Output = .automatic(), identifier: String = JournalLogHandler.defaultIdentifier,
        logger: Logger, showCommand: String = "envctl show"
    ) {
        self.output = output
        self.identifier = identifier
        self.logger = logger
        self.showCommand = showCommand
        if case .socket(let path) = output {
            socketSender = JournalSocketSender(path: path)
        } else {
            socketSender = nil
        }
    }

    /// Writes the entries of `report`, after which `configuration` is in use (`previous` was,
    /// before an applied reload): the configuration now in effect, its warnings and the keys
    /// that wait for a restart (loaded or applied); nothing changed (unchanged); the rejection
    /// (rejected); none for an abandoned reload, which only the log tells.
    ///
    /// Every entry carries the report's environment, instance and generation, and (but the
    /// warnings) its trigger, caller and revision (``append(_:to:)``).
    package func report(_ report: ReloadReport, configuration: EnvironmentSnapshot, previous: EnvironmentSnapshot?) {
        switch report.outcome {
        case .loaded, .applied:
            applied(report, configuration, previous: previous)
            warnings(report, configuration)
            pendingRestart(report, configuration)
        case .unchanged: unchanged(report)
        case .rejected: rejected(report)
        case .abandoned: break
        }
    }

    /// The configuration now in effect: loaded at start, or applied by a reload (with the
    /// changed keys and their previous values), its settings listed within the bounds of
    /// ``SettingsListing``.
    private func applied(_ report: ReloadReport, _ snapshot: EnvironmentSnapshot, previous: EnvironmentSnapshot?) {
        let what = report.outcome == .loaded ? "loaded" : "applied"
        let listing = SettingsListing(snapshot, changedKeys: report.changedKeys, previous: previous)
        let summary =
            "Configuration \(what): environment \(report.environment)"
            + (report.instance.map { ", instance \($0)" } ?? "") + ", generation \(report.generation), "
            + "\(listing.total) settings"
        let message = summary + Self.inline(listing, showCommand: showCommand)
        var entry = Self.entry(message, id: ConfigurationMessageID.applied, priority: .informational, report)
        for file in snapshot.files.prefix(SettingsListing.maximumFiles) { entry.append("CONFIG_SOURCE_FILE", file) }
        if snapshot.files.count > SettingsListing.maximumFiles {
            entry.append("CONFIG_SOURCE_FILE_COUNT", String(snapshot.files.count))
        }
        entry.append("CONFIG_SETTING_COUNT", String(listing.total))
        if listing.unlisted > 0 { entry.append("CONFIG_SETTING_UNLISTED", String(listing.unlisted)) }
        // On standard error the changed settings say what they were, as the log line of a
        // reload with a journal does (the reloader leaves that line to this rendering there).
        let previous = Dictionary(
            listing.changes.map { change in
                (change.key, change.previous.map { String($0.dropFirst(change.key.count + 1)) } ?? "<unset>")
            }, uniquingKeysWith: { first, _ in first })
        var lines: [String] = []
        for setting in listing.settings {
            entry.append("CONFIG_SETTING", setting.text)
            entry.append("CONFIG_SETTING_SOURCE", "\(setting.key)=\(setting.source)")
            let was = report.outcome == .applied ? previous[setting.key].map { " (was \($0))" } ?? "" : ""
            lines.append("  \(setting.text)\(was)    # \(setting.source)")
        }
        if listing.unlisted > 0 {
            lines.append("  … \(listing.unlisted) more (\(showCommand))")
        }
        Self.append(report, to: &entry)
        for change in listing.changes {
            entry.append("CONFIG_CHANGED_KEY", change.key)
            if let previous = change.previous { entry.append("CONFIG_PREVIOUS_SETTING", previous) }
        }
        if listing.changes.count < listing.changedTotal {
            entry.append("CONFIG_CHANGED_COUNT", String(listing.changedTotal))
        }
        // On stderr, a line per setting follows the summary (so the listing is not said twice).
        var text = summary
        if report.outcome == .applied {
            let keys = listing.changes.map(\.key)
            let more = listing.changedTotal - keys.count
            text +=
                keys.isEmpty
                ? ", no value changed (sources or pending restarts did)"
                : ", changed: " + keys.joined(separator: ", ") + (more > 0 ? ", and \(more) more" : "")
            text += " (trigger: \(report.trigger))"
        }
        send(entry, level: .info, text: text, details: lines)
    }

    /// The most settings, and bytes, the applied entry's `MESSAGE` lists, so that the plain
    /// journal (`journalctl -u NAME`) shows a small configuration whole: 20, 2 KiB.
    static let maximumInlineSettings = 20
    static let maximumInlineBytes = 2048

    /// `": KEY=VALUE, …"` for the first settings of `listing` (secrets redacted, control
    /// characters escaped, each cut at 200 bytes), at most ``maximumInlineSettings`` and
    /// ``maximumInlineBytes``; then how many are not shown and the command that shows them.
    static func inline(_ listing: SettingsListing, showCommand: String) -> String {
        var shown: [String] = []
        var bytes = 0
        for setting in listing.settings.prefix(maximumInlineSettings) {
            let text = SettingsListing.cut(ControlCharacters.escaped(setting.text), to: 200)
            guard bytes + text.utf8.count <= maximumInlineBytes else { break }
            bytes += text.utf8.count
            shown.append(text)
        }
        let rest = listing.total - shown.count
        guard !shown.isEmpty else { return rest > 0 ? " (`\(showCommand)` lists them)" : "" }
        return ": " + shown.joined(separator: ", ")
            + (rest > 0 ? ", and \(rest) more (`\(showCommand)` lists them all)" : "")
    }

    /// A reload that found nothing to change.
    private func unchanged(_ report: ReloadReport) {
        let message =
            "Configuration reloaded (\(report.trigger)), nothing changed: generation \(report.generation)"
        var entry = Self.entry(message, id: ConfigurationMessageID.unchanged, priority: .informational, report)
        Self.append(report, to: &entry)
        send(entry, level: .info, text: message)
    }

    /// An entry's first fields: `MESSAGE`, `MESSAGE_ID`, `PRIORITY`, and the report's
    /// `CONFIG_ENVIRONMENT`, `CONFIG_INSTANCE` (for an instance) and `CONFIG_GENERATION`.
    private static func entry(_ message: String, id: String, priority: SyslogPriority, _ report: ReloadReport)
        -> JournalEntry
    {
        var entry = JournalEntry()
        entry.append("MESSAGE", message)
        entry.append("MESSAGE_ID", id)
        entry.append("PRIORITY", String(priority.rawValue))
        entry.append("CONFIG_ENVIRONMENT", report.environment)
        if let instance = report.instance { entry.append("CONFIG_INSTANCE", instance) }
        entry.append("CONFIG_GENERATION", String(report.generation))
        return entry
    }

    /// `CONFIG_TRIGGER` (`start` for the load at start), `CONFIG_CALLER_UID`, `CONFIG_CALLER_UNIT`,
    /// `CONFIG_FLEET_REVISION`.
    private static func append(_ report: ReloadReport, to entry: inout JournalEntry) {
        entry.append("CONFIG_TRIGGER", report.trigger)
        if let uid = report.callerUID { entry.append("CONFIG_CALLER_UID", String(uid)) }
        if let unit = report.callerUnit { entry.append("CONFIG_CALLER_UNIT", unit) }
        if let revision = report.revision { entry.append("CONFIG_FLEET_REVISION", String(revision)) }
    }

    /// A rejected reload, with the file, line and key the error names.
    private func rejected(_ report: ReloadReport) {
        guard let error = report.error else { return }
        let message =
            "Configuration reload rejected, keeping generation \(report.generation): \(error)"
        var entry = Self.entry(message, id: ConfigurationMessageID.rejected, priority: .error, report)
        entry.append("CONFIG_ERROR", error.description)
        entry.append("CONFIG_ERROR_CODE", error.code.description)
        if let file = error.file { entry.append("CONFIG_FILE", file) }
        if let line = error.line { entry.append("CONFIG_LINE", String(line)) }
        if let key = error.key { entry.append("CONFIG_KEY", key) }
        Self.append(report, to: &entry)
        var metadata: Logger.Metadata = ["trigger": "\(report.trigger)", "error_code": "\(error.code)"]
        if let file = error.file { metadata["config_file"] = "\(file)" }
        if let line = error.line { metadata["config_line"] = "\(line)" }
        if let key = error.key { metadata["config_key"] = "\(key)" }
        send(entry, level: .error, text: message, metadata: metadata)
    }

    /// Restart-only keys whose new values wait for a restart, if any.
    private func pendingRestart(_ report: ReloadReport, _ snapshot: EnvironmentSnapshot) {
        let keys = report.pendingRestart
        guard !keys.isEmpty else { return }
        let listed = keys.prefix(SettingsListing.maximumChangedKeys).map { key in
            let current = snapshot.configuredValue(forKey: key).map { SettingsListing.cut($0.displayValue()) }
            let waiting = SettingsListing.cut(snapshot.pendingRestart[key].map { $0.displayValue() } ?? "<unset>")
            return "'\(key)' changed to \(waiting) but keeps \(current ?? "<unset>")"
        }
        let more = keys.count - listed.count
        let message =
            "Restart required: \(listed.joined(separator: ", "))\(more > 0 ? ", and \(more) more" : "")"
            + " until the service restarts"
        var entry = Self.entry(message, id: ConfigurationMessageID.pendingRestart, priority: .warning, report)
        for key in keys {
            entry.append(
                "CONFIG_PENDING_RESTART",
                "\(key)=\(snapshot.pendingRestart[key].map { $0.displayValue() } ?? "<unset>")")
        }
        send(entry, level: .warning, text: message)
    }

    /// The most warnings written as entries of their own after one load; the rest are counted
    /// in one more entry.
    static let maximumWarningEntries = 20

    /// What the configuration now in effect should fix (`EnvironmentSnapshot.warnings`):
    /// one entry each, with `CONFIG_WARNING_CODE`, `CONFIG_FILE`, `CONFIG_LINE` and `CONFIG_KEY`
    /// where known, at most ``maximumWarningEntries``.
    private func warnings(_ report: ReloadReport, _ snapshot: EnvironmentSnapshot) {
        for warning in snapshot.warnings.prefix(Self.maximumWarningEntries) {
            let message = "Configuration warning: \(warning)"
            var entry = Self.entry(message, id: ConfigurationMessageID.warning, priority: .warning, report)
            entry.append("CONFIG_WARNING_CODE", warning.code.description)
            if let file = warning.file { entry.append("CONFIG_FILE", file) }
            if let line = warning.line { entry.append("CONFIG_LINE", String(line)) }
            if let key = warning.key { entry.append("CONFIG_KEY", key) }
            send(entry, level: .warning, text: message)
        }
        let more = snapshot.warnings.count - Self.maximumWarningEntries
        if more > 0 {
            let message = "Configuration warning: \(more) more warnings (envctl check lists them all)"
            send(
                Self.entry(message, id: ConfigurationMessageID.warning, priority: .warning, report), level: .warning,
                text: message)
        }
    }

    /// Whether the entries are logged through the logger rather than sent to a journal (the
    /// output is standard error): then they are the only rendering of an event there, and the
    /// reloader does not log the event's line of its own beside them.
    var rendersThroughLogger: Bool {
        switch output {
        case .journal, .socket: false
        case .stderrWithPriorityPrefix, .stderrPlain: true
        }
    }

    /// Sends `entry` to the journal; without one (or when it is not delivered), logs `text` and
    /// `details` instead, with `metadata` and the entry's `MESSAGE_ID`.
    private func send(
        _ entry: JournalEntry, level: Logger.Level, text: String, details: [String] = [],
        metadata extra: Logger.Metadata = [:]
    ) {
        var entry = entry
        entry.append("SYSLOG_IDENTIFIER", identifier)
        let delivered: Bool
        switch output {
        case .journal: delivered = Journal.send(entry)
        case .socket: delivered = socketSender?.send(entry) ?? false
        case .stderrWithPriorityPrefix, .stderrPlain: delivered = false
        }
        if !delivered {
            let metadata: Logger.Metadata = ["message_id": "\(entry.values(named: "MESSAGE_ID").first ?? "")"]
            logger.log(level: level, "\(text)", metadata: metadata.merging(extra) { current, _ in current })
            for line in details { logger.log(level: level, "\(line)", metadata: metadata) }
        }
    }
}
