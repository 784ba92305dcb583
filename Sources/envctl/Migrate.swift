import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        // A dry run changes nothing, and needs no lock.
        let migrated =
            try dryRun
            ? migrate(change, formerNames: formerNames)
            : change.file.withLock { try migrate(change, formerNames: formerNames) }
        guard let migrated else {
            printLine(
                "no former names in the files in \(change.directory) (declarations from \(declaration.source)): nothing to migrate"
            )
            return
        }
        report(migrated)
    }

    /// What a migrate did, or would do: each file's rewrite, and what the check said.
    private typealias Migrated = (rewrites: [FormerNameMigration.Rewrite], checked: String)

    /// Rewrites every file that spells a former name (in memory), checks the result as the
    /// daemon would load it, refuses a change of value, and (unless a dry run) writes the files
    /// all or none; `nil` when no file spells a former name.
    private func migrate(_ change: DropInChange, formerNames: [(former: String, key: String)]) throws -> Migrated? {
        let rewrites = try FormerNameMigration.configurationFiles(change).compactMap {
            try FormerNameMigration.rewrite($0, formerNames, change)
        }
        guard !rewrites.isEmpty else { return nil }
        var candidates: [String: Data] = [:]
        for item in rewrites { candidates[item.file] = item.new }
        let checked = try change.check(candidates: candidates)
        try FormerNameMigration.refuseValueChanges(change, candidates: candidates)
        if !dryRun {
            // All files or none (FileTransaction): the daemon never applies a state in between.
            let transaction = FileTransaction(
                journalDirectory: change.file.directory, command: "envctl migrate", note: change.note)
            do {
                try transaction.commit(
                    rewrites.map {
                        FileTransaction.Change(file: change.file(at: $0.file), expected: $0.old, contents: $0.new)
                    })
            } catch let changed as FileTransaction.Changed {
                throw Failure(
                    "\(changed.path) changed while envctl migrated it (something writes it without envctl's lock); no file was written. Run envctl migrate again"
                )
            }
        }
        return (rewrites, checked)
    }

    /// Prints each rename, a warning where a file's comments were not kept, and the count.
    private func report(_ migrated: Migrated) {
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
    /// files left unfinished there (``FileTransaction/recover(in:scope:note:)``), and says what it found.
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

    /// How an operator takes a key out of `file` (``FormerNameMigration/howToRemove(in:)``).
    static func howToRemove(in file: String) -> String { FormerNameMigration.howToRemove(in: file) }
}
