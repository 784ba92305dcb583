import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Explain one setting: its declaration, the value in effect and where it came from, and whether a change takes a restart.",
        discussion: """
            From a running daemon (--pid, --app-name, --socket), the declaration is the one it serves \
            (envctl schema) and the value the one it runs with. Reading files (--config-dir, or --schema \
            FILE), the declaration comes from --schema, else from /usr/share/<app-name>/schema.json when it \
            is there, and the value from the files, checked against it. A secret value prints as <redacted>.
            """)

    @OptionGroup var location: LocationOptions

    @OptionGroup var schema: SchemaOptions

    @Argument(help: "The key, for example ListenPort or Database.Host.")
    var key: String

    func run() throws {
        try location.refuseDaemon(with: schema)
        if schema.file == nil, case .daemon(let client) = try location.target() {
            try explainFromDaemon(client)
        } else {
            try explainFromFiles()
        }
    }

    /// The key as a declaration and the configuration spell it (`Database.Port`).
    private func canonicalKey() throws -> String {
        do {
            return try SettingPath(parsing: key).description
        } catch {
            throw Failure("\(error)")
        }
    }

    private func explainFromDaemon(_ client: VarlinkClient) throws {
        let canonical = try canonicalKey()
        let reply = try client.schema()
        let declaration: SettingsDeclaration
        do {
            declaration = try SettingsDeclaration(jsonSchema: Data(reply.schema.utf8))
        } catch {
            throw Failure("the daemon's schema cannot be read: \(error)")
        }
        let setting = declaration.declaration(forKey: canonical)
        var lines = describe(setting, from: reply.declared ? "the running daemon" : nil)
        let answer: VarlinkReply
        do {
            answer = try client.call(
                VarlinkCall(method: ControlInterface.Method.get.qualifiedName, parameters: ["key": .string(canonical)]))
        } catch {
            throw Failure("\(error)")
        }
        var restartOnly = setting?.isRestartOnly ?? false
        // An older daemon does not say; then the declaration alone tells.
        var daemonToldRestart = false
        if answer.error == ControlInterface.Error.noSuchSetting.qualifiedName {
            lines.append("value: none (not set, and no default)")
        } else if let error = answer.error {
            throw Failure(VarlinkClient.explain(error, answer.parameters ?? [:]))
        } else {
            guard
                let record = try? JSONValue.record(
                    SettingRecord.self, from: answer.parameters?["setting"]?.objectValue)
            else { throw Failure("the daemon's answer cannot be read") }
            lines.append("value: \(record.value ?? ConfiguredValue.redacted)")
            lines.append("from: \(Listing.source(record.source))")
            if let told = answer.parameters?["restartOnly"]?.boolValue {
                restartOnly = told
                daemonToldRestart = true
            }
            if let next = try? JSONValue.record(
                SettingRecord.self, from: answer.parameters?["pendingRestart"]?.objectValue)
            {
                lines.append(
                    "waiting for a restart: \(next.value ?? ConfiguredValue.redacted) (from \(Listing.source(next.source)))"
                )
            }
        }
        lines.append(
            restartOnly
                ? "changing it: takes a restart (restart-only: a reload leaves the running value)"
                : daemonToldRestart
                    ? "changing it: a reload applies it"
                    : "changing it: a reload applies it (unless the files list it in RestartRequired)")
        guard setting != nil || answer.error == nil else {
            for line in lines { printLine(line) }
            throw Failure("'\(canonical)' is neither declared nor set")
        }
        for line in lines { printLine(line) }
    }

    private func explainFromFiles() throws {
        let canonical = try canonicalKey()
        var options = try location.filesOptions()
        let found = try schema.declaration(applicationName: location.applicationName)
        options.declaration = found?.declaration
        let setting = found?.declaration.declaration(forKey: canonical)
        var lines = describe(setting, from: found?.file)
        let snapshot: EnvironmentSnapshot
        do {
            snapshot = try Environment(options: options).snapshot
        } catch {
            for line in lines { printLine(line) }
            throw Failure("the files do not load, so no value is in effect: \(error)")
        }
        let entry = snapshot.configuredValue(forKey: canonical)
        if let entry {
            let display = Listing.display(entry, key: canonical, in: snapshot, revealSecrets: false)
            lines.append("value: \(display) (environment \(snapshot.environmentName))")
            lines.append("from: \(entry.source)")
        } else {
            lines.append("value: none in environment \(snapshot.environmentName) (not set, and no default)")
        }
        let restartOnly =
            setting?.isRestartOnly == true
            || snapshot.restartRequiredKeys.contains { canonical == $0 || canonical.hasPrefix($0 + ".") }
        lines.append(
            restartOnly
                ? "changing it: takes a restart (restart-only: a reload leaves the running value)"
                : "changing it: a reload applies it")
        for line in lines { printLine(line) }
        if setting == nil, entry == nil {
            throw Failure("'\(canonical)' is neither declared nor set")
        }
    }

    /// The declaration's lines; `source` names where it came from (`nil`: there is none).
    private func describe(_ setting: SettingDeclaration?, from source: String?) -> [String] {
        guard let setting else {
            guard let source else {
                return [
                    "\(key): no declaration to explain it (pass --schema FILE, or install /usr/share/<app-name>/schema.json)"
                ]
            }
            return ["\(key): not a declared setting (declarations from \(source)): nothing reads it"]
        }
        var lines = ["\(setting.key): declared in \(source ?? "the program")"]
        if !setting.summary.isEmpty { lines.append("description: \(setting.summary)") }
        lines.append("type: \(setting.type)")
        if let value = setting.defaultValue {
            // A duration in the form the files use (`5s`, not the `5` it is stored as).
            let shown =
                setting.type == .duration
                ? Duration(settingValue: value).map(DurationParser.text) ?? value.description : value.description
            lines.append("default: \(setting.isSecret ? ConfiguredValue.redacted : shown)")
        } else {
            lines.append("default: none")
        }
        let bounds = Self.bounds(setting.bounds)
        if !bounds.isEmpty { lines.append("bounds: \(bounds.joined(separator: "; "))") }
        let requirement = setting.requirement
        lines.append(
            "required: "
                + (!requirement.isRequired
                    ? "no" : requirement.environments.map { "in \($0.sorted().joined(separator: ", "))" } ?? "yes"))
        lines.append("secret: \(setting.isSecret ? "yes" : "no")")
        lines.append("restart-only: \(setting.isRestartOnly ? "yes" : "no")")
        if !setting.formerNames.isEmpty { lines.append("former names: \(setting.formerNames.joined(separator: ", "))") }
        return lines
    }

    static func bounds(_ bounds: SettingBounds) -> [String] {
        var parts: [String] = []
        if let range = bounds.rangeDescription {
            parts.append("range \(range)")
        } else if bounds.minimum != nil || bounds.maximum != nil {
            parts.append("range \(bounds.minimum.map { "\($0)" } ?? "")...\(bounds.maximum.map { "\($0)" } ?? "")")
        }
        if !bounds.allowedValues.isEmpty {
            parts.append("one of \(bounds.allowedValues.map { "'\($0)'" }.joined(separator: ", "))")
        }
        if let pattern = bounds.pattern { parts.append("matches \(pattern)") }
        if !bounds.urlSchemes.isEmpty { parts.append("schemes \(bounds.urlSchemes.joined(separator: ", "))") }
        return parts
    }
}
