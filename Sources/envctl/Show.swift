import ArgumentParser
import Environments
import EnvironmentsDaemon
import Foundation

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every effective setting with its value and source (secrets redacted).")

    @OptionGroup var location: LocationOptions

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Flag(help: "Reveal secret values instead of <redacted>.")
    var showSecrets = false

    @Option(
        help:
            "A running daemon's state file, to mark keys pending a restart (default: $RUNTIME_DIRECTORY/environment-state.json or /run/<app-name>/environment-state.json when present)."
    )
    var stateFile: String?

    func run() throws {
        try reportingFailures {
            let snapshot = try location.load()
            var pending = Set(snapshot.pendingRestart.keys)
            let statePath =
                stateFile ?? ReloadState.defaultPath()
                ?? "/run/\(location.applicationName)/\(ReloadState.defaultFileName)"
            if let state = try? ReloadState.read(from: statePath) { pending.formUnion(state.pendingRestart) }
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
    static func table(_ snapshot: EnvironmentSnapshot, pending: Set<String>, revealSecrets: Bool) -> String {
        var out = "# environment \(snapshot.environmentName), generation \(snapshot.generation)\n"
        out +=
            "# files: " + (snapshot.files.isEmpty ? "(built-in configuration)" : snapshot.files.joined(separator: ", "))
            + "\n"
        let keys = snapshot.leafKeys
        let width = min(keys.map(\.count).max() ?? 0, 40)
        for key in keys {
            guard let entry = snapshot.entries[key] else { continue }
            var line = key.padding(toLength: max(width, key.count), withPad: " ", startingAt: 0)
            line += " = " + entry.displayValue(revealSecrets: revealSecrets) + "    # \(entry.source)"
            if isPending(key, pending) { line += " (pending restart)" }
            out += line + "\n"
        }
        return out
    }

    static func json(_ snapshot: EnvironmentSnapshot, pending: Set<String>, revealSecrets: Bool) -> String {
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
            if isPending(key, pending) { item["pendingRestart"] = true }
            settings[key] = item
        }
        let object: [String: Any] = [
            "environment": snapshot.environmentName,
            "generation": Int(snapshot.generation),
            "files": snapshot.files,
            "settings": settings,
            "pendingRestart": pending.sorted(),
        ]
        let data = try! JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func jsonValue(_ value: ConfigValue) -> Any {
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

    private static func isPending(_ key: String, _ pending: Set<String>) -> Bool {
        pending.contains { key == $0 || key.hasPrefix($0 + ".") }
    }
}
