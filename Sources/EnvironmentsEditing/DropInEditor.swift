package import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// A change to one drop-in, checked before it is installed: the whole resulting configuration
/// is built as the daemon would build it, and only then the file is replaced (a temporary file
/// renamed over it, in the same directory), under the drop-in directory's lock and only if
/// nobody changed it meanwhile (``DropInFile``). `envctl set`, `unset`, `edit` and `migrate`
/// change files through it, and so does ``ConfigurationEditor``.
///
/// The check runs on the files for every environment they define (so a change for Staging
/// cannot break Production), and, when a running daemon is given (``daemon``: envctl's, over
/// its control socket), through the daemon's own check with the new file as a candidate, so
/// that the application's own validation counts too: for the daemon's environment, the
/// daemon's check is the one that counts (it has the credentials and defaults the files alone
/// do not).
///
/// What the check relies on is compared, when the change is installed, with what was true when
/// it began (``verifyDaemon``): a daemon restarted meanwhile into another environment or
/// instance, or gone, or one started where none ran, would leave an environment that the change
/// was meant for checked by no one. Then nothing is installed (``DaemonChanged``).
package struct DropInEditor {
    /// The configuration directory the drop-in belongs to.
    package let directory: String
    /// The main file's name, `Environments.plist`.
    package let fileName = "Environments.plist"
    /// The drop-in's file name, with `.plist`.
    package let name: String
    /// Whether no name was given (it is ``defaultName``).
    package let isDefault: Bool
    /// The options the files are read with, in ``directory`` (called for each build: envctl's
    /// may read a fleet's documents).
    package let options: () throws -> EnvironmentOptions
    /// The one environment to check, or `nil`: every environment the files define.
    package let onlyEnvironment: String?
    /// The running daemon that checks the change too, if one was found.
    package let daemon: (any RunningDaemon)?
    /// Fails with ``DaemonChanged`` when the daemon is not what it was when the change began
    /// (or one now runs where none did); called before each check.
    package var verifyDaemon: () throws -> Void = {}
    /// A settings declaration to check the files against (`migrate`'s), besides the daemon's
    /// own check; `nil`: none.
    package var declaration: SettingsDeclaration?
    /// The application's declaration (the running daemon's, an installed schema), against
    /// which the value of every key a change writes is checked in each environment envctl
    /// checks: a value of the wrong type, out of bounds or failing a rule is refused before
    /// anything is written. Only the keys written: a required key that the unit's environment
    /// gives, and no file, blocks no change. `nil`: none.
    package var valueDeclaration: SettingsDeclaration?
    /// Where notes go (``DropInFile/note``).
    package var note: NoteSink = EditingNotes.log

    /// The drop-in `dropIn` (with or without `.plist`; default ``defaultName``) in `directory`.
    ///
    /// - Parameter origin: Where the name came from, for the error when it cannot be a file
    ///   name (`--drop-in`).
    package init(
        directory: String, dropIn: String?, origin: String, onlyEnvironment: String? = nil,
        daemon: (any RunningDaemon)? = nil, options: @escaping () throws -> EnvironmentOptions
    ) throws {
        self.name = try Self.fileName(dropIn, origin: origin)
        self.isDefault = dropIn == nil
        self.directory = directory
        self.onlyEnvironment = onlyEnvironment
        self.daemon = daemon
        self.options = options
    }

    /// The drop-in's file name: `dropIn` (with or without `.plist`; default ``defaultName``)
    /// with `.plist`, when it can be a file's name.
    package static func fileName(_ dropIn: String?, origin: String) throws -> String {
        var base = dropIn ?? defaultName
        if base.hasSuffix(".plist") { base.removeLast(".plist".count) }
        do {
            _ = try PathComponentName(base, kind: .dropIn, from: origin)
        } catch {
            throw Failure(.invalidName, "\(error)")
        }
        return base + ".plist"
    }

    /// The daemon no longer is what the change was checked against: nothing was installed.
    package struct DaemonChanged: Error, CustomStringConvertible {
        /// What changed, in a sentence.
        package var description: String

        package init(description: String) { self.description = description }
    }

    /// The drop-in `set`, `unset` and `edit` change when no `--drop-in` is given: `90-local`,
    /// at the top of the range systemd recommends for local configuration (60-90), so that it
    /// sorts after the drop-ins a package ships (`50-timeouts.plist`) and wins over them.
    package static let defaultName = "90-local"
    /// The default of envctl 0.1 and earlier, which sorts before drop-ins a package ships.
    /// Still read as any drop-in is; envctl no longer writes it unless `--drop-in` names it.
    package static let formerDefaultName = "50-local"

    /// Without `--drop-in`, when the former default drop-in (`50-local.plist`, written by an
    /// older envctl) is there: a note for the operator, that it stays where it is in the order
    /// and that the new default sorts after it. `nil` otherwise.
    package var formerDefaultNote: String? {
        guard isDefault else { return nil }
        let former = PathNames.join(directory, fileName + ".d/" + Self.formerDefaultName + ".plist")
        guard FileManager.default.fileExists(atPath: former) else { return nil }
        let dropIns = PathNames.join(directory, fileName + ".d")
        let later = ((try? FileManager.default.contentsOfDirectory(atPath: dropIns)) ?? [])
            .filter {
                ConfigurationLocation.isDropInFileName($0) && $0 > Self.formerDefaultName + ".plist" && $0 < name
            }
            .sorted()
        let outweighed = later.isEmpty ? "" : " (\(later.joined(separator: ", ")) sort after it and win over it)"
        return
            "note: \(former), the default drop-in of earlier envctl releases, is still read in its place in the lexical order\(outweighed); envctl now writes \(name), which sorts after the drop-ins a package ships. To change a value it holds, pass --drop-in \(Self.formerDefaultName), or move its settings into \(name) (envctl edit) and remove it"
    }

    /// Fails when `effect` shows that the change does not take effect everywhere it applies,
    /// unless `allowShadowed`; returns the notes to print once it is installed: where it does
    /// not take effect (with `allowShadowed`), and the environment- or instance-specific
    /// values a write to a wider section replaces.
    package func verdict(_ effect: ChangeEffect, allowShadowed: Bool) throws -> [String] {
        let report = effect.shadowReport(dropIn: path)
        if !report.isEmpty, !allowShadowed {
            throw Failure(
                .shadowedKey,
                report.joined(separator: ". ")
                    + ". Nothing was written: change the value in effect where it is set, or write where it wins (a drop-in that sorts later: --drop-in NAME), or pass --allow-shadowed to make this change all the same"
            )
        }
        return report.map { "note: \($0) (written all the same: --allow-shadowed)" }
            + effect.replacementReport(dropIn: path).map { "note: " + $0 }
    }

    /// `Environments.plist.d/NAME.plist`, relative to ``directory``.
    package var relativePath: String { fileName + ".d/" + name }
    /// The main file's absolute path.
    package var mainFilePath: String { PathNames.join(directory, fileName) }
    /// The drop-in's absolute path.
    package var path: String { PathNames.join(directory, relativePath) }

    /// The drop-in on disk: its lock, and its replacement.
    package var file: DropInFile {
        var file = DropInFile(path: path, mainFile: PathNames.join(directory, fileName))
        file.note = note
        return file
    }

    /// Another file of the configuration (the main file, another drop-in) on disk, its notes
    /// going where this change's go.
    package func file(at path: String) -> DropInFile {
        var file = DropInFile(path: path, mainFile: mainFilePath)
        file.note = note
        return file
    }

    /// The drop-in's current text, or `nil` if there is none.
    package func current() throws -> Data? {
        try file.read()?.contents
    }

    /// How often ``update(_:)`` starts over when the drop-in changes under it.
    package static let attempts = 3

    /// Changes the drop-in holding its directory's lock (see ``DropInFile``): reads it, makes
    /// the new contents from it with `make` (which checks them), and replaces it if it still
    /// holds what was read. Another `envctl` waits for the lock; something that writes the
    /// drop-in without it makes `update` start over with what it wrote (at most
    /// ``attempts`` times), so no change that was reported is lost.
    ///
    /// - Parameter make: The new contents from the current ones (`nil`: no drop-in yet), and
    ///   what to return.
    package func update<Result>(_ make: (Data?) throws -> (contents: Data, result: Result)) throws -> Result {
        do {
            return try file.withLock {
                for _ in 0..<Self.attempts {
                    let old = try current()
                    let (contents, result) = try make(old)
                    do {
                        try file.replace(expecting: old, with: contents)
                        return result
                    } catch is DropInFile.Changed {
                        continue
                    }
                }
                throw Failure(
                    .conflict,
                    "\(path) kept changing while envctl checked a change to it (something writes it without envctl's lock); nothing was written"
                )
            }
        } catch let changed as DaemonChanged {
            throw Failure(
                .conflict,
                "\(changed.description); nothing was written. Run the command again to check it against what runs now"
            )
        }
    }

    /// Checks the configuration with `contents` as the drop-in; the error says what is wrong,
    /// with file and line.
    ///
    /// - Returns: What was checked, for a confirmation line.
    /// - Throws: ``DaemonChanged`` when the daemon is not what it was when the change began
    ///   (``verifyDaemon()``); a ``Failure`` when the change is not valid.
    @discardableResult
    package func check(_ contents: Data) throws -> String {
        try check(candidates: [path: contents])
    }

    /// Checks the configuration with `candidates` (absolute paths of the main file or drop-ins
    /// in ``directory``, and their new contents) in place of the files, as ``check(_:)``.
    @discardableResult
    package func check(candidates: [String: Data]) throws -> String {
        try verifyDaemon()
        let (environments, unreadable) = try checkFiles(candidates)
        var parts: [String] = []
        if !environments.isEmpty {
            // A credential not read here is not checked here: only the daemon, which has it, can.
            let note =
                unreadable.isEmpty
                ? "" : " (credential \(unreadable.joined(separator: ", ")) not readable here, not checked)"
            parts.append("checked for \(environments.joined(separator: ", "))\(note)")
        }
        if let daemon {
            var texts: [String: String] = [:]
            for (file, contents) in candidates {
                guard let text = String(data: contents, encoding: .utf8) else {
                    throw Failure(
                        .malformedFile, "\(file): not UTF-8 text; the daemon checks XML property lists", file: file)
                }
                texts[relativePath(of: file)] = text
            }
            let checkedEnvironment = try daemon.check(candidates: texts)
            parts.append("checked by the running daemon (environment \(checkedEnvironment))")
        }
        return parts.joined(separator: "; ")
    }

    /// `file` relative to ``directory``: `Environments.plist`, `Environments.plist.d/NAME.plist`.
    package func relativePath(of file: String) -> String {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return file.hasPrefix(prefix) ? String(file.dropFirst(prefix.count)) : file
    }

    /// The key paths `candidates` write (set or change), in any section, compared with the
    /// files as they are now.
    private func writtenPaths(_ candidates: [String: Data]) throws -> [[String]] {
        var paths: [[String]] = []
        for (file, contents) in candidates {
            let old = try DropInDocument.root(FileManager.default.contents(atPath: file), path: file)
            let new = try DropInDocument.root(contents, path: file)
            paths += ChangedKey.differences(old: old, new: new).filter { $0.kind == .written }.map(\.components)
        }
        return paths
    }

    /// The configuration the files give now, for every environment they define (or
    /// ``onlyEnvironment`` only); environments that do not build are left out.
    package func currentSnapshots() throws -> [EnvironmentSnapshot] {
        let base = try options()
        return try environmentNames(base).compactMap { name in
            var options = base
            options.environment = name
            return try? Environment(options: options).snapshot
        }
    }

    /// Builds the configuration from the files, with the candidate, for every environment
    /// they define (or `--environment`'s only); returns their names, and the credentials that
    /// could not be read here (each a placeholder in what was checked).
    private func checkFiles(_ candidates: [String: Data]) throws -> (environments: [String], unreadable: [String]) {
        var base = try options()
        base.candidateDocuments = candidates
        base.declaration = declaration
        // The daemon's environment is the daemon's to check, with its own defaults, credentials
        // and validation (``check(_:)``); envctl checks the others, which no daemon here runs.
        let names = try environmentNames(base).filter { $0 != daemon?.environment }
        let written = valueDeclaration == nil ? [] : try writtenPaths(candidates)
        var unreadable: Set<String> = []
        for name in names {
            var options = base
            options.environment = name
            let snapshot: EnvironmentSnapshot
            do {
                snapshot = try Environment(options: options).snapshot
            } catch {
                throw Failure(loading: error, environment: name, prefix: "environment \(name): ")
            }
            unreadable.formUnion(snapshot.unreadableCredentials.values.joined())
            if let valueDeclaration, let problem = valueDeclaration.problems(writing: written, in: snapshot).first {
                var refusal = Failure(loading: problem, environment: name, prefix: "environment \(name): ")
                refusal.code = .rejectedValue
                refusal.description += "; nothing was written"
                throw refusal
            }
        }
        return (names, unreadable.sorted())
    }

    /// ``onlyEnvironment`` (`--environment`), else every environment the files (with the candidate, the fleet's
    /// documents and the drop-ins) define, as `envctl check` finds them.
    package func environmentNames(_ base: EnvironmentOptions) throws -> [String] {
        if let onlyEnvironment { return [onlyEnvironment] }
        let names: [String]
        do {
            names = try Environment.definedEnvironments(base)
        } catch {
            throw Failure(loading: error, environment: nil)
        }
        return names.isEmpty ? [BuildInfo().defaultEnvironment] : names
    }
}

/// A running daemon that checks a change with its own validation, as envctl asks one over its
/// control socket: what a check by it stands for, and its answers.
package protocol RunningDaemon {
    /// The environment it runs: its check is the one that counts for it.
    var environment: String { get }
    /// The instance it runs, if any.
    var instance: String? { get }
    /// Checks the configuration with `candidates` (paths relative to the configuration
    /// directory, and their new text) in place of the files.
    ///
    /// - Returns: The environment it checked.
    /// - Throws: ``DropInEditor/DaemonChanged`` when it is no longer what the change began
    ///   with; a ``Failure`` when it rejects the change.
    func check(candidates: [String: String]) throws -> String
    /// What outweighs every file in it, by key: `a runtime override`, `$APP_LOG_LEVEL`.
    func outweighingSources() -> [String: String]
}
