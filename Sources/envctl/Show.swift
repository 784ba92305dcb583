import ArgumentParser
import Environments
import EnvironmentsDaemon
import Foundation

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every effective setting with its value and source (secrets redacted).",
        discussion: """
            With a running daemon's state file (see --state-file), keys that changed but wait for a \
            restart show the value the daemon runs with, and the value it will take after a restart.
            """)

    @OptionGroup var location: LocationOptions

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Flag(help: "Reveal secret values instead of <redacted>.")
    var showSecrets = false

    func run() throws {
        try reportingFailures {
            let state = location.daemonState()
            let snapshot = try location.load(state: state)
            // Restart-only keys whose new value waits: the value the daemon runs with, if known.
            var pending: [String: String?] = [:]
            for key in state?.pendingRestart ?? [] { pending[key] = state?.runningValues?[key] }
            if json {
                print(SettingsListing.json(snapshot, pending: pending, revealSecrets: showSecrets))
            } else {
                print(SettingsListing.table(snapshot, pending: pending, revealSecrets: showSecrets), terminator: "")
            }
        }
    }
}

/// Renders a snapshot's settings for people and for machines.
enum SettingsListing {
    static func table(_ snapshot: EnvironmentSnapshot, pending: [String: String?], revealSecrets: Bool) -> String {
        var out = "# environment \(snapshot.environmentName), generation \(snapshot.generation)\n"
        let files = snapshot.files.isEmpty ? "(built-in configuration)" : snapshot.files.joined(separator: ", ")
        out += "# files: \(files)\n"
        let keys = snapshot.leafKeys
        let width = min(keys.map(\.count).max() ?? 0, 40)
        for key in keys {
            guard let entry = snapshot.entries[key] else { continue }
            let value = entry.displayValue(revealSecrets: revealSecrets)
            var line = key.padding(toLength: max(width, key.count), withPad: " ", startingAt: 0)
            if let running = runningValue(key, pending) {
                line += " = \(running ?? value)    # \(entry.source)"
                line += running == nil ? " (pending restart)" : " (pending restart: \(value) after restart)"
            } else {
                line += " = \(value)    # \(entry.source)"
            }
            out += line + "\n"
        }
        return out
    }

    static func json(_ snapshot: EnvironmentSnapshot, pending: [String: String?], revealSecrets: Bool) -> String {
        var settings: [String: Any] = [:]
        for key in snapshot.leafKeys {
            guard let entry = snapshot.entries[key] else { continue }
            var item: [String: Any] = [
                "value": entry.isSecret && !revealSecrets ? ConfiguredValue.redacted : jsonValue(entry.value),
                "source": entry.source.description,
                "layer": entry.source.layer.rawValue,
                "secret": entry.isSecret,
            ]
            if let file = entry.source.file { item["file"] = file }
            if let section = entry.source.section { item["section"] = section }
            if let running = runningValue(key, pending) {
                item["pendingRestart"] = true
                if let running { item["runningValue"] = running }
            }
            settings[key] = item
        }
        let object: [String: Any] = [
            "environment": snapshot.environmentName,
            "generation": Int(snapshot.generation),
            "files": snapshot.files,
            "settings": settings,
            "pendingRestart": pending.keys.sorted(),
        ]
        let data = try! JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func jsonValue(_ value: SettingValue) -> Any {
        switch value {
        case .string(let text): text
        case .integer(let number): number
        case .double(let number): number
        case .bool(let flag): flag
        case .date(let date): date.formatted(.iso8601)
        case .data(let data): data.base64EncodedString()
        case .array(let values): values.map(jsonValue)
        case .dictionary(let values): values.mapValues(jsonValue)
        }
    }

    /// `nil` if `key` is not pending; `.some(nil)` if pending with an unknown running value;
    /// `.some(value)` with the value the daemon runs with.
    private static func runningValue(_ key: String, _ pending: [String: String?]) -> String?? {
        if let exact = pending[key] { return .some(exact) }
        if pending.keys.contains(where: { key.hasPrefix($0 + ".") }) { return .some(nil) }
        return nil
    }
}
