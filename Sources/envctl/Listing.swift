import Environments
import EnvironmentsControl
import EnvironmentsEditing
import FileWatching
import JSONText
import TextEscaping
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `show` prints, from the files or from a running daemon.
struct Listing {
    struct Row {
        var key: String
        /// The value as shown: the value, or `<redacted>`.
        var display: String
        /// The value for JSON: typed where known, else the text.
        var json: JSONValue
        var source: ValueSource
        var secret: Bool
        /// For a restart-only key whose new value waits: the value it will take after a restart.
        var pendingNext: String?
        /// The configuration extension (`systemd-confext`) the value's file comes from.
        var confext: ConfigurationExtensions.Origin? = nil
    }

    var environment: String
    var instance: String?
    var generation: Int
    var files: [String]
    var rows: [Row]
    var pendingRestart: [String]
    var lastReload: ReloadReport?
    /// A log level set with `io.systemd.service.SetLogLevel`, which wins over the setting.
    var logLevelOverride: LogLevelOverrideRecord?
    /// What the configuration should fix (a key written twice in one dictionary), one line each.
    var warnings: [String] = []
    /// Where the values come from, for the table's first line: the running daemon, or files.
    var origin: String?
    /// The same for JSON, as `readFrom`: `{"daemon": {"pid": N, "socket": PATH}}` or
    /// `{"files": {"directory": DIR, "environmentChosenBy": HOW}}`.
    var readFrom: [String: JSONValue]?
    /// Credentials the files use that cannot be read here, by name.
    var unreadableCredentials: [String] = []

    /// The files' configuration.
    init(_ snapshot: EnvironmentSnapshot, revealSecrets: Bool) {
        warnings = snapshot.warnings.map(\.description)
        environment = snapshot.environmentName
        instance = snapshot.instanceName
        generation = Int(snapshot.generation)
        files = snapshot.files
        pendingRestart = []
        lastReload = nil
        unreadableCredentials = Set(snapshot.unreadableCredentials.values.joined()).sorted()
        rows = snapshot.leafKeys.compactMap { key in
            guard let entry = snapshot.configuredValue(forKey: key) else { return nil }
            let hidden = entry.isSecret && !revealSecrets
            let display = Listing.display(entry, key: key, in: snapshot, revealSecrets: revealSecrets)
            return Row(
                key: key, display: display,
                json: hidden ? .string(display) : Listing.jsonValue(entry.value), source: entry.source,
                secret: entry.isSecret)
        }
    }

    /// A value read from files as envctl shows it: its text, `<redacted>` for a secret, and
    /// for a secret built from a credential that cannot be read here (an operator's shell has
    /// no `$CREDENTIALS_DIRECTORY`), `<credential NAME: not readable here>`, which says why
    /// there is nothing to reveal (with `revealSecrets`, the text around it shows).
    static func display(
        _ entry: ConfiguredValue, key: String, in snapshot: EnvironmentSnapshot, revealSecrets: Bool
    ) -> String {
        if !revealSecrets, let names = snapshot.unreadableCredentials[key], !names.isEmpty {
            return names.sorted().map(UnreadableCredential.placeholder).joined(separator: " ")
        }
        return entry.displayValue(revealSecrets: revealSecrets)
    }

    /// Why credentials cannot be read here, for a note: `$CREDENTIALS_DIRECTORY` is not set,
    /// or this user may not read them.
    static func unreadableReason(_ environmentVariables: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        (environmentVariables["CREDENTIALS_DIRECTORY"] ?? "").isEmpty
            ? "$CREDENTIALS_DIRECTORY is not set: systemd gives credentials (LoadCredential=) to the daemon alone"
            : "this user may not read them in $CREDENTIALS_DIRECTORY"
    }

    /// What a daemon runs with.
    init(_ reply: DescribeReply) {
        environment = reply.environment
        instance = reply.instance
        generation = reply.generation
        files = reply.files
        lastReload = reply.lastReload
        logLevelOverride = reply.logLevelOverride
        warnings = reply.warnings ?? []
        pendingRestart = reply.pendingRestart.map(\.key)
        let pending = Dictionary(reply.pendingRestart.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        rows = reply.settings.map { setting in
            let display = setting.value ?? ConfiguredValue.redacted
            var row = Row(
                key: setting.key, display: display, json: .string(display), source: Listing.source(setting.source),
                secret: setting.secret)
            if let waiting = pending[setting.key] { row.pendingNext = waiting.next.value ?? ConfiguredValue.redacted }
            return row
        }
        // Restart-only keys that were not set before still show, with no running value.
        for waiting in reply.pendingRestart where waiting.running == nil {
            rows.append(
                Row(
                    key: waiting.key, display: "<unset>", json: .null, source: Listing.source(waiting.next.source),
                    secret: waiting.next.secret, pendingNext: waiting.next.value ?? ConfiguredValue.redacted))
        }
    }

    static func source(_ record: SourceRecord) -> ValueSource {
        ValueSource(
            layer: ValueSource.Layer(rawValue: record.layer) ?? .environment, file: record.file, section: record.section
        )
    }

    /// Names the configuration extension each value's file comes from, where one does.
    mutating func noteExtensions(_ extensions: ConfigurationExtensions) {
        guard !extensions.merges.isEmpty else { return }
        for index in rows.indices {
            rows[index].confext = rows[index].source.file.flatMap(extensions.origin(of:))
        }
    }

    /// The listing as text: each line has its control characters escaped (a key or value with
    /// a line feed, ESC or CR cannot forge a line or drive the terminal).
    var table: String {
        var lines: [String] = []
        if let origin { lines.append("# \(origin)") }
        lines.append(
            "# environment \(environment)" + (instance.map { ", instance \($0)" } ?? "") + ", generation \(generation)")
        lines.append("# files: \(files.isEmpty ? "(built-in configuration)" : files.joined(separator: ", "))")
        if !unreadableCredentials.isEmpty {
            lines.append(
                "# not readable here: credential \(unreadableCredentials.joined(separator: ", ")) "
                    + "(\(Listing.unreadableReason())); the running daemon has them: envctl show --app-name NAME asks it"
            )
        }
        if let lastReload, lastReload.verdict == .rejected {
            lines.append(
                "# last reload (\(lastReload.trigger)) rejected, running generation \(lastReload.generation): "
                    + (lastReload.error?.description ?? "no reason given"))
        }
        if let override = logLevelOverride {
            lines.append(
                "# log level \(override.level) (syslog \(override.syslogLevel)) set by io.systemd.service.SetLogLevel "
                    + "from uid \(override.uid) at \(override.setAt): it overrides \(override.key) until the daemon restarts"
            )
        }
        for warning in warnings { lines.append("# warning: \(warning)") }
        var out = lines.map { ControlCharacters.escaped($0) + "\n" }.joined()
        let keys = rows.map { ControlCharacters.escaped($0.key) }
        let width = min(keys.map(\.count).max() ?? 0, 40)
        for (row, key) in zip(rows, keys) {
            var line = key + String(repeating: " ", count: max(0, width - key.count))
            line += " = \(row.display)    # \(row.source)"
            if let confext = row.confext { line += " \(confext.note)" }
            if let next = row.pendingNext { line += " (pending restart: \(next) after restart)" }
            if let override = logLevelOverride, row.key == override.key {
                line += " (overridden: \(override.level), by io.systemd.service.SetLogLevel until restart)"
            }
            out += ControlCharacters.escaped(line) + "\n"
        }
        return out
    }

    /// One setting in `show --json`.
    private struct SettingDocument: Encodable {
        var value: JSONValue
        var source: String
        var layer: String
        var secret: Bool
        var file: String?
        var section: String?
        var pendingRestart: Bool?
        var runningValue: String?
        var nextValue: String?
        /// `{"name": NAME, "certain": BOOL}`: the configuration extension the file comes from.
        var confext: ConfextDocument?
    }

    /// A configuration extension in `show --json`.
    private struct ConfextDocument: Encodable {
        var name: String
        var certain: Bool
    }

    /// What `show --json` prints.
    private struct Document: Encodable {
        var environment: String
        var instance: String?
        var generation: Int
        var files: [String]
        var settings: [String: SettingDocument]
        var pendingRestart: [String]
        var readFrom: [String: JSONValue]?
        /// In `ReloadVerdict`'s form.
        var lastReload: [String: JSONValue]?
        var logLevelOverride: LogLevelOverrideRecord?
        var warnings: [String]?
    }

    func json() throws -> String {
        var settings: [String: SettingDocument] = [:]
        for row in rows {
            var item = SettingDocument(
                value: row.json, source: row.source.description, layer: row.source.layer.rawValue, secret: row.secret,
                file: row.source.file, section: row.source.section,
                confext: row.confext.map { ConfextDocument(name: $0.name, certain: $0.certain) })
            if let next = row.pendingNext {
                item.pendingRestart = true
                item.runningValue = row.display
                item.nextValue = next
            }
            settings[row.key] = item
        }
        return try Listing.jsonText(
            Document(
                environment: environment, instance: instance, generation: generation, files: files, settings: settings,
                pendingRestart: pendingRestart, readFrom: readFrom, lastReload: lastReload?.verdictJSON,
                logLevelOverride: logLevelOverride, warnings: warnings.isEmpty ? nil : warnings))
    }

    /// `value` as pretty JSON, keys sorted. Every value in it comes from ``jsonValue(_:)`` or is
    /// text, so encoding should not fail; if it ever does, that is an error, not a crash.
    static func jsonText(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw Failure("the configuration cannot be written as JSON: \(error)")
        }
    }

    static func jsonValue(_ value: SettingValue) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .integer(let number): .int(number)
        // JSON has no NaN or infinity: those are the strings "nan", "inf" and "-inf".
        case .real(let number):
            number.isFinite ? .double(number) : .string(number.isNaN ? "nan" : number < 0 ? "-inf" : "inf")
        case .bool(let flag): .bool(flag)
        case .date(let date): .string(date.formatted(.iso8601))
        case .data(let data): .string(data.base64EncodedString())
        case .array(let values): .array(values.map(jsonValue))
        case .dictionary(let values): .object(values.mapValues(jsonValue))
        }
    }
}
