import ArgumentParser
import Environments
import EnvironmentsEditing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DropInDocument {
    /// The section `set` and `unset` change: `Common`, or `--environment`'s.
    static func section(common: Bool, location: LocationOptions) throws -> String {
        if common, location.environment != nil { throw Failure("give --environment NAME or --common, not both") }
        return location.environment ?? "Common"
    }

    /// Warns that rewriting drops the comments of a hand-written file.
    static func warnAboutComments(_ data: Data?, path: String) {
        if let note = commentsNote(data, path: path) { printError(note) }
    }
}

/// The value types `set` writes.
enum ValueType: String, ExpressibleByArgument, CaseIterable {
    case string, integer, real, bool, date, data

    /// `text` as a property-list value of this type.
    func value(_ text: String) throws -> Any {
        switch self {
        case .string:
            return text
        case .integer:
            guard let value = Int(text) else { throw Failure("'\(text)' is not an integer (--type integer)") }
            return value
        case .real:
            guard let value = Double(text), value.isFinite else {
                throw Failure("'\(text)' is not a finite real number (--type real)")
            }
            return value
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "on", "1": return true
            case "false", "no", "off", "0": return false
            default: throw Failure("'\(text)' is not a boolean: true/false, yes/no, on/off or 1/0 (--type bool)")
            }
        case .date:
            guard let value = try? Date(text, strategy: .iso8601) else {
                throw Failure("'\(text)' is not an ISO 8601 date such as 2026-11-23T12:00:00Z (--type date)")
            }
            return value
        case .data:
            guard let value = Data(base64Encoded: text) else {
                throw Failure("'\(text)' is not base64 (--type data)")
            }
            return value
        }
    }
}

struct SetValue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set one key in a drop-in, after checking the whole resulting configuration.",
        discussion: """
            Writes KEY (a dotted path reaches nested dictionaries) into the Common dictionary, or with \
            --environment into that environment's, of the drop-in Environments.plist.d/NAME.plist \
            (--drop-in, default 90-local) in the configuration directory of the daemon found with \
            --app-name, --pid or --socket, else in --config-dir, $CONFIGURATION_DIRECTORY or \
            /etc/<app-name>. Before anything is written, the configuration with the changed drop-in is \
            built for every environment the files define and, when a daemon is found, checked by it \
            (its own validation included; for the environment it runs, its check is the one that counts). Only then the drop-in is replaced atomically; on any error \
            nothing changes and envctl exits 1. The daemon applies the new file on its next reload \
            (its file watcher, or systemctl reload).

            The order: Environments.plist, then the drop-ins in lexical order of their names, each file \
            applying its Common, then the environment's dictionary, then the instance's (Instances); \
            APP_ variables and runtime overrides outweigh every file. The default drop-in, 90-local, \
            sorts after those a package ships (numbered 10 to 50, as systemd recommends: 60 to 90 for \
            local changes). A 50-local.plist written by an earlier envctl (its default) is still read \
            in its place, and changed only with --drop-in 50-local.

            set, unset and edit never report a change that has no effect. With the change checked, \
            envctl compares what was asked with what takes effect, in every environment the files \
            define and for each instance they name (for the running daemon's environment, with its APP_ \
            variables and runtime overrides): a key written that something else outweighs somewhere (a \
            later drop-in, the drop-in's own environment or instance dictionary, an APP_ variable), or \
            a key removed that was in effect nowhere, is refused with the value in effect, its file and \
            line, and nothing is written (exit 1), unless --allow-shadowed, which writes it and says \
            the same on stderr. A write to Common that replaces values an environment or instance set \
            for itself in an earlier file is written, with a note on stderr naming each.

            set, unset and edit take a lock in the drop-in directory (.envctl.lock, flock) from reading \
            the drop-in to replacing it, so concurrent changes apply one after the other and none is \
            lost; they wait for it at most 60 s. A .envctl.lock that envctl did not make is never written: \
            one that is a symbolic link, a hard link or not a regular file is refused (remove it). The replaced drop-in keeps its owner, group, mode and \
            ACLs (and other extended attributes). A new drop-in takes the owner, group and mode of the \
            most restrictive of the configuration's files (Environments.plist and the other drop-ins: \
            the one that gives others the fewest permissions, then its group), so whoever may read the \
            configuration may read it and no one else; 0644 when there is no file yet. A drop-in that \
            is a symbolic link is refused (change its target instead).
            """)

    @OptionGroup var location: LocationOptions

    @Flag(help: "Write into Common (the default) rather than an environment's dictionary.")
    var common = false

    @Option(name: .customLong("drop-in"), help: "The drop-in's name, with or without .plist.")
    var dropIn: String?

    @Option(help: "The value's type.")
    var type: ValueType = .string

    @OptionGroup var shadow: ShadowOptions

    @OptionGroup var declared: DeclaredKeyOptions

    @OptionGroup var schema: SchemaOptions

    @Argument(help: "The key, for example LogLevel or Database.Host.")
    var key: String

    @Argument(help: "The value, as text of --type.")
    var value: String

    func run() throws {
        let section = try DropInDocument.section(common: common, location: location)
        let path = try DropInDocument.components(key)
        let typed = try type.value(value)
        // Before the drop-in directory's lock (which may make the directory): a key or value
        // that other property-list readers would refuse is never written.
        try XMLCharacters.check(key: key, value: typed)
        try location.refuseDaemon(with: schema)
        var change = try DropInChange(location: location, dropIn: dropIn)
        // A key no declaration covers is a key nothing reads: refused before the lock, as a
        // shadowed one is (--allow-undeclared writes it).
        let known = try DeclaredKeyOptions.known(schema: schema, location: location, daemon: change.client)
        try declared.check(key, components: path, against: known)
        // A value the application's declaration refuses is never written (in any environment
        // envctl checks; the daemon checks its own).
        change.valueDeclaration = known?.declaration
        let outcome = try change.set(
            key, components: path, to: typed, in: section, allowShadowed: shadow.allowShadowed)
        let (old, checked, notes) = (outcome.old, outcome.checked, outcome.notes)
        DropInDocument.warnAboutComments(old, path: change.path)
        for note in notes { printError(note) }
        // The value typed may be a password: echoed only when no environment holds the key
        // as a secret, or lists it in `Secrets` however it is spelled (a new key too), and
        // redacted when that cannot be told.
        let snapshots = (try? change.currentSnapshots()) ?? []
        let isSecret =
            snapshots.isEmpty
            || snapshots.contains { $0.configuredValue(forKey: key)?.isSecret ?? false || $0.coversAsSecret(key) }
            || EnvironmentSnapshot.covers(DeclaredSecrets.keys(of: known?.declaration), key)
        let shown = isSecret ? ConfiguredValue.redacted : value
        printLine("\(change.path): \(section).\(key) = \(shown) (\(checked))")
    }
}

struct Unset: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove keys from a drop-in, after checking the whole resulting configuration.",
        discussion: """
            Removes each KEY from the Common dictionary (or --environment's) of the drop-in \
            Environments.plist.d/NAME.plist (--drop-in, default 90-local), found and checked as for set. \
            A key the drop-in does not set is an error, and nothing is written; so is, unless \
            --allow-shadowed, a key whose value was in effect in no environment (something else \
            outweighs it everywhere), since removing it changes nothing.
            """)

    @OptionGroup var location: LocationOptions

    @Flag(help: "Remove from Common (the default) rather than an environment's dictionary.")
    var common = false

    @Option(name: .customLong("drop-in"), help: "The drop-in's name, with or without .plist.")
    var dropIn: String?

    @OptionGroup var shadow: ShadowOptions

    @Argument(help: "The keys to remove.")
    var keys: [String]

    func validate() throws {
        if keys.isEmpty { throw ValidationError("give at least one key") }
    }

    func run() throws {
        let section = try DropInDocument.section(common: common, location: location)
        let change = try DropInChange(location: location, dropIn: dropIn)
        // Before the lock, which would make the drop-in directory.
        // An older envctl's default drop-in may hold it: say so.
        let hint =
            change.formerDefaultNote.map { _ in
                " (\(DropInChange.formerDefaultName).plist, the default drop-in of earlier envctl releases, is there: pass --drop-in \(DropInChange.formerDefaultName) to change it)"
            } ?? ""
        guard try change.current() != nil else {
            throw Failure("\(change.path) does not exist; nothing to unset\(hint)")
        }
        let outcome = try change.unset(keys, in: section, allowShadowed: shadow.allowShadowed, hint: hint)
        let (old, checked, notes) = (outcome.old, outcome.checked, outcome.notes)
        DropInDocument.warnAboutComments(old, path: change.path)
        for note in notes { printError(note) }
        printLine("\(change.path): removed \(keys.map { "\(section).\($0)" }.joined(separator: ", ")) (\(checked))")
    }
}
