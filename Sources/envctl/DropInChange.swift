@_spi(Integrations) import Environments
@_spi(Integrations) import EnvironmentsControl
import Foundation
import Varlink

/// A change to one drop-in that `edit`, `set` and `unset` check before they install it:
/// the whole resulting configuration is built as the daemon would build it, and only then the
/// file is replaced (a temporary file renamed over it, in the same directory), under the drop-in
/// directory's lock and only if nobody changed it meanwhile (``DropInFile``).
///
/// The check runs on the files for every environment they define (so a change for Staging
/// cannot break Production), and, when a daemon is found (`--app-name`, `--pid`, `--socket`),
/// through its `Check` with the new file as a candidate, so that the application's own
/// validation counts too: for the daemon's environment, the daemon's check is the one that
/// counts (it has the credentials and defaults envctl does not).
///
/// What the check relies on is recorded when the change begins (``began``: the daemon's
/// environment, instance and directory, or that none was found) and compared with what is true
/// when it is installed: a daemon restarted meanwhile into another environment or instance, or
/// gone, or one started where none ran, would leave an environment that the change was meant
/// for checked by no one. Then nothing is installed (``DaemonChanged``): the operator runs the
/// command again, against what runs now.
struct DropInChange {
    /// The configuration directory the drop-in belongs to.
    let directory: String
    /// The main file's name, `Environments.plist`.
    let fileName = "Environments.plist"
    /// The drop-in's file name, with `.plist`.
    let name: String
    /// Whether no `--drop-in` named it (it is ``defaultName``).
    let isDefault: Bool
    /// The running daemon to check with, if one was found.
    let daemon: VarlinkClient?
    /// The environment the daemon runs: its own check is the one that counts for it.
    let daemonEnvironment: String?
    let location: LocationOptions
    /// The daemon the change is checked with, as it was when the change began; `nil`: none.
    let began: DaemonState?
    /// A settings declaration to check the files against (`migrate`'s), besides the daemon's
    /// own check; `nil`: none.
    var declaration: SettingsDeclaration?

    /// What a check by the daemon stands for: the environment and instance it runs, and the
    /// directory it reads.
    struct DaemonState: Equatable {
        var environment: String
        var instance: String?
        var directory: String
        /// Its process, for messages only (a restart into the same state changes nothing).
        var process: Int32?

        static func == (left: DaemonState, right: DaemonState) -> Bool {
            left.environment == right.environment && left.instance == right.instance
                && (LocationOptions.realPath(left.directory) ?? left.directory)
                    == (LocationOptions.realPath(right.directory) ?? right.directory)
        }

        /// `environment Staging, instance a (process 12)`.
        var summary: String {
            "environment \(environment)" + (instance.map { ", instance \($0)" } ?? "")
                + (process.map { " (process \($0))" } ?? "")
        }
    }

    /// The daemon no longer is what the change was checked against: nothing was installed.
    struct DaemonChanged: Error, CustomStringConvertible {
        /// What changed, in a sentence.
        var description: String
    }

    /// The drop-in `set`, `unset` and `edit` change when no `--drop-in` is given: `90-local`,
    /// at the top of the range systemd recommends for local configuration (60-90), so that it
    /// sorts after the drop-ins a package ships (`50-timeouts.plist`) and wins over them.
    static let defaultName = "90-local"
    /// The default of envctl 0.1 and earlier, which sorts before drop-ins a package ships.
    /// Still read as any drop-in is; envctl no longer writes it unless `--drop-in` names it.
    static let formerDefaultName = "50-local"

    /// The drop-in `name` (with or without `.plist`; default ``defaultName``) in the directory of
    /// the daemon that `location` finds (its `Describe` says where: exactly where it reads),
    /// else in the directory the files are read from, made absolute.
    ///
    /// A daemon named explicitly (`--pid`, `--socket`) must answer; `--config-dir` with a daemon
    /// must name the daemon's directory.
    init(location: LocationOptions, dropIn: String?) throws {
        var base = dropIn ?? Self.defaultName
        if base.hasSuffix(".plist") { base.removeLast(".plist".count) }
        do {
            _ = try PathComponentName(base, kind: .dropIn, from: "--drop-in")
        } catch {
            throw Failure("\(error)")
        }
        self.name = base + ".plist"
        self.isDefault = dropIn == nil
        self.location = location
        try location.checkNames()
        let target: LocationOptions.Target
        if location.pid != nil || location.socket != nil {
            target = try location.findTarget(requireDaemon: true)
        } else {
            // `--app-name` alone: its daemon when it runs, else the files.
            target = (try? location.findTarget(requireDaemon: true)) ?? .files
        }
        if case .daemon(let client) = target {
            let reply = try client.describe()
            self.directory = try location.daemonDirectory(reply, of: client)
            self.daemon = client
            self.daemonEnvironment = reply.environment
            self.began = DaemonState(
                environment: reply.environment, instance: reply.instance, directory: directory,
                process: location.daemonProcess(client))
        } else {
            self.daemonEnvironment = nil
            self.began = nil
            let options = try location.options().anchoringPaths()
            self.directory = ConfigurationLocation(options: options).directory
            self.daemon = nil
            if let name = location.applicationName, location.configDirectory == nil {
                printError(
                    "no running daemon of \(name) to check the change: changing the files in \(directory), checked by envctl alone"
                )
            }
        }
    }

    /// Without `--drop-in`, when the former default drop-in (`50-local.plist`, written by an
    /// older envctl) is there: a note for the operator, that it stays where it is in the order
    /// and that the new default sorts after it. `nil` otherwise.
    var formerDefaultNote: String? {
        guard isDefault else { return nil }
        let former = (directory as NSString).appendingPathComponent(
            fileName + ".d/" + Self.formerDefaultName + ".plist")
        guard FileManager.default.fileExists(atPath: former) else { return nil }
        let dropIns = (directory as NSString).appendingPathComponent(fileName + ".d")
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
    func verdict(_ effect: ChangeEffect, allowShadowed: Bool) throws -> [String] {
        let report = effect.shadowReport(dropIn: path)
        if !report.isEmpty, !allowShadowed {
            throw Failure(
                report.joined(separator: ". ")
                    + ". Nothing was written: change the value in effect where it is set, or write where it wins (a drop-in that sorts later: --drop-in NAME), or pass --allow-shadowed to make this change all the same"
            )
        }
        return report.map { "note: \($0) (written all the same: --allow-shadowed)" }
            + effect.replacementReport(dropIn: path).map { "note: " + $0 }
    }

    /// `Environments.plist.d/NAME.plist`, relative to ``directory``.
    var relativePath: String { fileName + ".d/" + name }
    /// The main file's absolute path.
    var mainFilePath: String { (directory as NSString).appendingPathComponent(fileName) }
    /// The drop-in's absolute path.
    var path: String { (directory as NSString).appendingPathComponent(relativePath) }

    /// The drop-in on disk: its lock, and its replacement.
    var file: DropInFile {
        DropInFile(path: path, mainFile: (directory as NSString).appendingPathComponent(fileName))
    }

    /// The drop-in's current text, or `nil` if there is none.
    func current() throws -> Data? {
        try file.read()?.contents
    }

    /// How often ``update(_:)`` starts over when the drop-in changes under it.
    static let attempts = 3

    /// Changes the drop-in holding its directory's lock (see ``DropInFile``): reads it, makes
    /// the new contents from it with `make` (which checks them), and replaces it if it still
    /// holds what was read. Another `envctl` waits for the lock; something that writes the
    /// drop-in without it makes `update` start over with what it wrote (at most
    /// ``attempts`` times), so no change that was reported is lost.
    ///
    /// - Parameter make: The new contents from the current ones (`nil`: no drop-in yet), and
    ///   what to return.
    func update<Result>(_ make: (Data?) throws -> (contents: Data, result: Result)) throws -> Result {
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
                    "\(path) kept changing while envctl checked a change to it (something writes it without envctl's lock); nothing was written"
                )
            }
        } catch let changed as DaemonChanged {
            throw Failure(
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
    func check(_ contents: Data) throws -> String {
        try check(candidates: [path: contents])
    }

    /// Checks the configuration with `candidates` (absolute paths of the main file or drop-ins
    /// in ``directory``, and their new contents) in place of the files, as ``check(_:)``.
    @discardableResult
    func check(candidates: [String: Data]) throws -> String {
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
            var records: [JSONValue] = []
            for (file, contents) in candidates.sorted(by: { $0.key < $1.key }) {
                guard let text = String(data: contents, encoding: .utf8) else {
                    throw Failure("\(file): not UTF-8 text; the daemon checks XML property lists")
                }
                records.append(
                    try JSONValueEncoder().encode(CheckCandidate(path: relativePath(of: file), contents: text)))
            }
            let reply: [String: JSONValue]
            do {
                reply = try daemon.ask(.check, ["candidates": .array(records)])
            } catch let failure as Failure {
                throw Failure("the running daemon rejects it: \(failure.description)")
            }
            // Restarted into another environment between the question and this check: its
            // answer is for an environment that the files' check left to it, not that one.
            let checkedEnvironment = reply["environment"]?.stringValue ?? "?"
            if let began, checkedEnvironment != began.environment {
                throw DaemonChanged(
                    description:
                        "the daemon now runs environment \(checkedEnvironment), not \(began.environment) as when this change began, so \(began.environment) was checked by no one"
                )
            }
            parts.append("checked by the running daemon (environment \(checkedEnvironment))")
        }
        return parts.joined(separator: "; ")
    }

    /// `file` relative to ``directory``: `Environments.plist`, `Environments.plist.d/NAME.plist`.
    func relativePath(of file: String) -> String {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return file.hasPrefix(prefix) ? String(file.dropFirst(prefix.count)) : file
    }

    /// Compares the daemon now with ``began``, the daemon when the change began.
    ///
    /// - Throws: ``DaemonChanged`` when it is gone or does not answer, runs another environment
    ///   or instance, or reads another directory; or when none ran and one of ``location``'s
    ///   reads this directory now (its own validation would not have been asked).
    func verifyDaemon() throws {
        guard let daemon, let began else {
            // Only where the start looked for one without requiring it (`--app-name`, or the
            // unit's `$RUNTIME_DIRECTORY`): `--pid` and `--socket` require one at the start.
            guard case .daemon(let client)? = try? location.findTarget(requireDaemon: true),
                let reply = try? client.describe(), let found = reply.configDirectory,
                let now = LocationOptions.realPath(found), now == LocationOptions.realPath(directory)
            else { return }
            let state = DaemonState(
                environment: reply.environment, instance: reply.instance, directory: found,
                process: location.daemonProcess(client))
            throw DaemonChanged(
                description:
                    "a daemon started on \(directory) while this change was made (\(state.summary)); none ran when it began, so its own check was not asked for"
            )
        }
        let reply: DescribeReply
        do {
            reply = try daemon.describe()
        } catch let failure as Failure {
            throw DaemonChanged(
                description:
                    "the daemon this change is checked with (\(began.summary), socket \(daemon.path)) no longer answers: \(failure.description)"
            )
        }
        let now = DaemonState(
            environment: reply.environment, instance: reply.instance,
            directory: reply.configDirectory ?? "(none)", process: location.daemonProcess(daemon))
        guard now == began else {
            var message =
                "the daemon was restarted while this change was made: it now runs \(now.summary), not \(began.summary) as when the change began"
            if now.directory != began.directory { message += ", and reads \(now.directory), not \(began.directory)" }
            if now.environment != began.environment {
                message += "; \(began.environment) would be left to a check without the daemon's own validation"
            }
            throw DaemonChanged(description: message)
        }
    }

    /// The configuration the files give now, for every environment they define (or
    /// `--environment`'s only); environments that do not build are left out.
    func currentSnapshots() throws -> [EnvironmentSnapshot] {
        let base = try location.options(directory: directory)
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
        var base = try location.options(directory: directory)
        base.candidateDocuments = candidates
        base.declaration = declaration
        // The daemon's environment is the daemon's to check, with its own defaults, credentials
        // and validation (``check(_:)``); envctl checks the others, which no daemon here runs.
        let names = try environmentNames(base).filter { daemon == nil || $0 != daemonEnvironment }
        var unreadable: Set<String> = []
        for name in names {
            var options = base
            options.environment = name
            do {
                unreadable.formUnion(try Environment(options: options).snapshot.unreadableCredentials.values.joined())
            } catch {
                throw Failure("environment \(name): \(error)")
            }
        }
        return (names, unreadable.sorted())
    }

    /// `--environment`, else every environment the files (with the candidate, the fleet's
    /// documents and the drop-ins) define, as `envctl check` finds them.
    func environmentNames(_ base: EnvironmentOptions) throws -> [String] {
        if let environment = location.environment { return [environment] }
        let names: [String]
        do {
            names = try Environment.definedEnvironments(base)
        } catch {
            throw Failure("\(error)")
        }
        return names.isEmpty ? [BuildInfo().defaultEnvironment] : names
    }
}
