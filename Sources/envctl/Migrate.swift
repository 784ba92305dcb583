import ArgumentParser
@_spi(Integrations) import Environments
@_spi(Integrations) import EnvironmentsControl
import EnvironmentsEditing
import Foundation

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rename settings written under a former name to their name now, in every file, checked as set is.",
        discussion: """
            A settings declaration names the keys a setting had in earlier releases (its former names: \
            envctl explain KEY, x-former-names in envctl schema). The daemon still applies a value \
            written under a former name, with a warning; migrate renames each one in Environments.plist \
            and every drop-in, in Common, in each environment's dictionary and in each instance's, and in \
            the Secrets and RestartRequired lists, keeping the value and everything else in the file \
            (comments too, where the rename stays inside one dictionary).

            The declaration comes from --schema FILE, else from the running daemon (--app-name, --pid, \
            --socket; its Schema, as envctl schema prints it), else from the schema the application's \
            package installs, /usr/share/<app-name>/schema.json. A section that sets both a former name \
            and the name now is a conflict: migrate names both, with their lines, and writes nothing. So \
            too when renaming would change a value in effect (a former name that the daemon ignores today, \
            because the name now is set in another file or section: remove it by hand).

            The files change as with set: under the drop-in directory's lock, only after the whole \
            resulting configuration is checked (for every environment, by the running daemon too when \
            there is one, and against the declaration), each replaced atomically with its owner, group, \
            mode and ACLs kept. --dry-run says what would change and checks it, and writes nothing.

            The files change together or not at all: each new file is written and synced beside its \
            file, a journal (.envctl-transaction in the drop-in directory) names them, then each is renamed \
            into place and the journal removed. A file that cannot be written or replaced leaves every \
            file as it was. While the journal is there the daemon reads the files as they were before \
            the change; a migrate that was killed midway is completed by the next envctl that changes \
            the configuration, or by envctl migrate --resume.
            """)

    @OptionGroup var location: LocationOptions

    @OptionGroup var schema: SchemaOptions

    @Flag(name: .customLong("dry-run"), help: "Say what would be renamed and check it; write nothing.")
    var dryRun = false

    @Flag(
        help:
            "Only complete a migrate that was interrupted (its journal, .envctl-transaction, is in the drop-in directory); needs no declaration."
    )
    var resume = false

    /// One rename in one file.
    struct Rename {
        var file: String
        var line: Int?
        /// `Common.DatabaseHost -> Common.Database.Host`, or `Secrets: DatabaseHost -> Database.Host`.
        var text: String
    }

    /// A file with its renames done.
    struct Rewrite {
        var file: String
        var old: Data
        var new: Data
        var renames: [Rename]
        /// Whether the text was edited in place (comments kept) rather than written anew.
        var keepsText: Bool
    }

    func run() throws {
        if resume {
            try self.resumeInterrupted()
            return
        }
        try location.refuseDaemon(with: schema)
        var found = try DropInChange(location: location, dropIn: nil)
        let declaration = try findDeclaration(found)
        found.declaration = declaration.declaration
        let change = found
        let formerNames = declaration.declaration.settings.flatMap { setting in
            setting.formerNames.map { (former: $0, key: setting.key) }
        }
        guard !formerNames.isEmpty else {
            printLine("the settings declared in \(declaration.source) have no former names: nothing to migrate")
            return
        }
        let migrated: (rewrites: [Rewrite], checked: String)? = try {
            let body = { () throws -> (rewrites: [Rewrite], checked: String)? in
                let rewrites = try configurationFiles(change).compactMap { try rewrite($0, formerNames, change) }
                guard !rewrites.isEmpty else { return nil }
                var candidates: [String: Data] = [:]
                for item in rewrites { candidates[item.file] = item.new }
                let checked = try change.check(candidates: candidates)
                try refuseValueChanges(change, candidates: candidates)
                if !dryRun {
                    // All files or none (FileTransaction): the daemon never applies a state in between.
                    let transaction = FileTransaction(
                        journalDirectory: change.file.directory, command: "envctl migrate", note: change.note)
                    do {
                        try transaction.commit(
                            rewrites.map {
                                FileTransaction.Change(
                                    file: change.file(at: $0.file), expected: $0.old,
                                    contents: $0.new)
                            })
                    } catch let changed as FileTransaction.Changed {
                        throw Failure(
                            "\(changed.path) changed while envctl migrated it (something writes it without envctl's lock); no file was written. Run envctl migrate again"
                        )
                    }
                }
                return (rewrites, checked)
            }
            // A dry run changes nothing, and needs no lock.
            if dryRun { return try body() }
            return try change.file.withLock(body)
        }()
        guard let migrated else {
            printLine(
                "no former names in the files in \(change.directory) (declarations from \(declaration.source)): nothing to migrate"
            )
            return
        }
        let renames = migrated.rewrites.flatMap(\.renames)
        for rename in renames {
            printLine("\(rename.file)\(rename.line.map { ":\($0)" } ?? ""): \(rename.text)")
        }
        for item in migrated.rewrites where !item.keepsText {
            DropInDocument.warnAboutComments(item.old, path: item.file)
        }
        let renameCount = "\(renames.count) former name\(renames.count == 1 ? "" : "s")"
        let fileCount = "\(migrated.rewrites.count) file\(migrated.rewrites.count == 1 ? "" : "s")"
        if dryRun {
            printLine(
                "would migrate \(renameCount) in \(fileCount) (\(migrated.checked)); nothing was written (--dry-run)"
            )
        } else {
            printLine("migrated \(renameCount) in \(fileCount) (\(migrated.checked))")
        }
    }

    /// `--resume`: takes the drop-in directory's lock, which completes a change that spans
    /// files left unfinished there (``FileTransaction/recover(in:)``), and says what it found.
    private func resumeInterrupted() throws {
        guard !dryRun else { throw Failure("--resume writes what an interrupted migrate left; not with --dry-run") }
        let change = try DropInChange(location: location, dropIn: nil)
        let journal = TransactionJournal.path(in: change.file.directory)
        let found = FileManager.default.fileExists(atPath: journal)
        try change.file.withLock {}
        printLine(
            found
                ? "the interrupted change in \(change.directory) is complete; the daemon reloads it when its file watcher sees the journal go (or: envctl reload)"
                : "no interrupted change in \(change.directory) (no \(journal)): nothing to resume")
    }

    /// The declaration: `--schema`, else the running daemon's, else the installed one; with
    /// where it came from.
    private func findDeclaration(_ change: DropInChange) throws -> (declaration: SettingsDeclaration, source: String) {
        if schema.file != nil, let found = try schema.declaration(applicationName: nil) {
            return (found.declaration, found.file)
        }
        if let daemon = change.client {
            let reply = try daemon.schema()
            guard reply.declared else {
                throw Failure(
                    "the running daemon declares no settings, so no former names: pass --schema FILE for another declaration"
                )
            }
            do {
                return (try SettingsDeclaration(jsonSchema: Data(reply.schema.utf8)), "the running daemon")
            } catch {
                throw Failure("the daemon's schema cannot be read: \(error)")
            }
        }
        if let found = try schema.declaration(applicationName: location.applicationName) {
            return (found.declaration, found.file)
        }
        throw Failure(
            "no settings declaration to take the former names from: pass --schema FILE (envctl schema prints one), name the running daemon (--app-name, --pid, --socket), or install /usr/share/<app-name>/schema.json and pass --app-name"
        )
    }

    /// The main file and the drop-ins, in order.
    private func configurationFiles(_ change: DropInChange) -> [String] {
        let dropIns = (change.directory as NSString).appendingPathComponent(change.fileName + ".d")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dropIns)) ?? [])
            .filter { ConfigurationLocation.isDropInFileName($0) }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        return [change.mainFilePath] + names.map { (dropIns as NSString).appendingPathComponent($0) }
    }

    /// The file with its former names renamed, or `nil` when it has none.
    private func rewrite(_ file: String, _ formerNames: [(former: String, key: String)], _ change: DropInChange) throws
        -> Rewrite?
    {
        let dropInFile = change.file(at: file)
        let old: Data
        do {
            guard let state = try dropInFile.read() else { return nil }
            old = state.contents
        } catch let failure as Failure {
            // A file envctl cannot replace (a symbolic link) matters only if it has former names.
            guard let data = FileManager.default.contents(atPath: file) else { return nil }
            do {
                if try renamed(data, file: file, formerNames) == nil { return nil }
            } catch {}
            throw failure
        }
        guard let found = try renamed(old, file: file, formerNames) else { return nil }
        let (root, renames, edits) = found
        let structural = try DropInDocument.data(root)
        // The same renames in the text itself keep its comments and layout; used only if the
        // result reads back exactly as the rewritten dictionary.
        if let edits, old.first != UInt8(ascii: "b"), var text = String(data: old, encoding: .utf8) {
            var applied = true
            for edit in edits {
                guard let range = KeyLines.range(of: edit.anchors + [edit.element], in: text) else {
                    applied = false
                    break
                }
                text.replaceSubrange(range, with: edit.replacement)
            }
            let data = Data(text.utf8)
            if applied, let parsed = try? DropInDocument.root(data, path: file), ChangedKey.same(parsed, root) {
                return Rewrite(file: file, old: old, new: data, renames: renames, keepsText: true)
            }
        }
        return Rewrite(file: file, old: old, new: structural, renames: renames, keepsText: false)
    }

    /// How an operator takes a key out of `file`: a drop-in is envctl's to edit; the main file
    /// (a package's conffile, say) is edited by hand.
    static func howToRemove(in file: String) -> String {
        let directory = (file as NSString).deletingLastPathComponent
        guard directory.hasSuffix(".d") else { return "edit \(file) by hand" }
        let name = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        return "envctl unset KEY --drop-in \(name), or envctl edit --drop-in \(name)"
    }

    /// An edit of the text: the element found after the anchors (each after the one before),
    /// and what replaces it.
    struct TextEdit {
        var anchors: [String]
        var element: String
        var replacement: String
    }

    /// The root dictionary of `data` with its former names renamed, the renames, and the same
    /// as edits of the text (`nil` where one moves a value to another dictionary); `nil` when
    /// there is nothing to rename.
    private func renamed(_ data: Data, file: String, _ formerNames: [(former: String, key: String)]) throws -> (
        [String: Any], [Rename], [TextEdit]?
    )? {
        var root = try DropInDocument.root(data, path: file)
        var renames: [Rename] = []
        var edits: [TextEdit]? = []
        var conflicts: [String] = []
        // The sections, as (path in the root, name in messages).
        var sections: [([String], String)] = []
        for name in root.keys.sorted() where !["Secrets", "RestartRequired"].contains(name) {
            guard let value = root[name] as? [String: Any] else { continue }
            if name == "Instances" {
                for instance in value.keys.sorted() where value[instance] is [String: Any] {
                    sections.append((["Instances", instance], "Instances.\(instance)"))
                }
            } else {
                sections.append(([name], name))
            }
        }
        for (former, key) in formerNames {
            guard let formerPath = try? SettingPath(parsing: former).components,
                let keyPath = try? SettingPath(parsing: key).components
            else { continue }
            for (sectionPath, sectionName) in sections {
                guard var section = Self.value(at: sectionPath[...], in: root) as? [String: Any],
                    let value = Self.value(at: formerPath[...], in: section)
                else { continue }
                let formerLine = KeyLines.line(of: sectionPath + formerPath, in: data)
                if Self.value(at: keyPath[...], in: section) != nil {
                    let keyLine = KeyLines.line(of: sectionPath + keyPath, in: data)
                    conflicts.append(
                        "\(file)\(formerLine.map { ":\($0)" } ?? ""): \(sectionName).\(former) is the former name of \(key), and \(sectionName).\(key) is set too\(keyLine.map { " (line \($0))" } ?? ""): keep one of them (\(Self.howToRemove(in: file))) and run migrate again"
                    )
                    continue
                }
                section = try DropInDocument.setting(nil, at: formerPath[...], in: section, trail: "")
                section = try DropInDocument.setting(value, at: keyPath[...], in: section, trail: "")
                root = try Self.setting(section, at: sectionPath, in: root)
                renames.append(
                    Rename(file: file, line: formerLine, text: "\(sectionName).\(former) -> \(sectionName).\(key)"))
                if formerPath.count == keyPath.count, formerPath.dropLast() == keyPath.dropLast() {
                    edits?.append(
                        TextEdit(
                            anchors: (sectionPath + formerPath.dropLast()).map(KeyLines.keyElement),
                            element: KeyLines.keyElement(formerPath.last ?? former),
                            replacement: KeyLines.keyElement(keyPath.last ?? key)))
                } else {
                    edits = nil
                }
            }
            // The lists of key paths: a former name there is renamed too (a secret stays secret).
            for list in ["Secrets", "RestartRequired"] {
                guard var entries = root[list] as? [Any] else { continue }
                var changed = false
                for (index, entry) in entries.enumerated() {
                    guard let text = entry as? String else { continue }
                    let canonical = (try? SettingPath(parsing: text).description) ?? text
                    let renamedEntry: String
                    if canonical == former {
                        renamedEntry = key
                    } else if canonical.hasPrefix(former + ".") {
                        renamedEntry = key + String(canonical.dropFirst(former.count))
                    } else {
                        continue
                    }
                    entries[index] = renamedEntry
                    changed = true
                    let whole = String(decoding: data, as: UTF8.self)
                    let line = KeyLines.range(
                        of: [KeyLines.keyElement(list), KeyLines.stringElement(text)], in: whole
                    ).map { KeyLines.line(at: $0.lowerBound, in: whole) }
                    renames.append(Rename(file: file, line: line, text: "\(list): \(text) -> \(renamedEntry)"))
                    edits?.append(
                        TextEdit(
                            anchors: [KeyLines.keyElement(list)], element: KeyLines.stringElement(text),
                            replacement: KeyLines.stringElement(renamedEntry)))
                }
                if changed { root[list] = entries }
            }
        }
        if !conflicts.isEmpty {
            throw Failure(conflicts.joined(separator: "; ") + "; nothing was written")
        }
        return renames.isEmpty ? nil : (root, renames, edits)
    }

    /// The value at a path of dictionaries.
    static func value(at path: ArraySlice<String>, in dictionary: [String: Any]) -> Any? {
        guard let first = path.first, let value = dictionary[first] else { return nil }
        if path.count == 1 { return value }
        guard let child = value as? [String: Any] else { return nil }
        return Self.value(at: path.dropFirst(), in: child)
    }

    /// `root` with `section` at `path` (a section: one or two levels).
    private static func setting(_ section: [String: Any], at path: [String], in root: [String: Any]) throws
        -> [String: Any]
    {
        var root = root
        if path.count == 1 {
            root[path[0]] = section
        } else {
            var parent = root[path[0]] as? [String: Any] ?? [:]
            parent[path[1]] = section
            root[path[0]] = parent
        }
        return root
    }

    /// Fails when the renames change a value in effect in some environment (a former name that
    /// is ignored today because its name now is set elsewhere, which renaming would bring in).
    private func refuseValueChanges(_ change: DropInChange, candidates: [String: Data]) throws {
        var base = try location.options(directory: change.directory)
        base.declaration = change.declaration
        var after = base
        after.candidateDocuments = candidates
        var changed: [String] = []
        for environment in try change.environmentNames(after) {
            var old = base
            old.environment = environment
            var new = after
            new.environment = environment
            guard let before = try? Environment(options: old).snapshot,
                let now = try? Environment(options: new).snapshot
            else { continue }
            // Values only: a Secrets entry renamed with its key makes a value secret that was
            // not, which is what renaming is for.
            let keys = Set(now.leafKeys).union(before.leafKeys).sorted().filter {
                now.value(forKey: $0) != before.value(forKey: $0)
            }
            if !keys.isEmpty { changed.append("\(environment): \(keys.joined(separator: ", "))") }
        }
        guard changed.isEmpty else {
            throw Failure(
                "renaming would change values in effect (\(changed.joined(separator: "; "))): a former name there is ignored today because its name now is set in another file or section; remove the former name by hand (envctl unset or edit) instead. Nothing was written"
            )
        }
    }
}
