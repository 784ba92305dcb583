import Environments
import EnvironmentsControl
import Foundation

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
struct DropInChange {
    /// The configuration directory the drop-in belongs to.
    let directory: String
    /// The main file's name, `Environments.plist`.
    let fileName = "Environments.plist"
    /// The drop-in's file name, with `.plist`.
    let name: String
    /// The running daemon to check with, if one was found.
    let daemon: VarlinkClient?
    /// The environment the daemon runs: its own check is the one that counts for it.
    let daemonEnvironment: String?
    let location: LocationOptions

    /// The drop-in `name` (with or without `.plist`; default `50-local`) in the directory of
    /// the daemon that `location` finds (its `Describe` says where: exactly where it reads),
    /// else in the directory the files are read from, made absolute.
    ///
    /// A daemon named explicitly (`--pid`, `--socket`) must answer; `--config-dir` with a daemon
    /// must name the daemon's directory.
    init(location: LocationOptions, dropIn: String?) throws {
        var base = dropIn ?? "50-local"
        if base.hasSuffix(".plist") { base.removeLast(".plist".count) }
        do {
            _ = try PathComponentName(base, kind: .dropIn, from: "--drop-in")
        } catch {
            throw Failure("\(error)")
        }
        self.name = base + ".plist"
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
            self.directory = try location.daemonDirectory(reply)
            self.daemon = client
            self.daemonEnvironment = reply.environment
        } else {
            self.daemonEnvironment = nil
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

    /// `Environments.plist.d/NAME.plist`, relative to ``directory``.
    var relativePath: String { fileName + ".d/" + name }
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
        try file.withLock {
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
    }

    /// Checks the configuration with `contents` as the drop-in; the error says what is wrong,
    /// with file and line.
    ///
    /// - Returns: What was checked, for a confirmation line.
    @discardableResult
    func check(_ contents: Data) throws -> String {
        let (environments, unreadable) = try checkFiles(contents)
        var parts: [String] = []
        if !environments.isEmpty {
            // A credential not read here is not checked here: only the daemon, which has it, can.
            let note =
                unreadable.isEmpty
                ? "" : " (credential \(unreadable.joined(separator: ", ")) not readable here, not checked)"
            parts.append("checked for \(environments.joined(separator: ", "))\(note)")
        }
        if let daemon {
            guard let text = String(data: contents, encoding: .utf8) else {
                throw Failure("\(path): not UTF-8 text; the daemon checks XML property lists")
            }
            let candidate = try JSONValueEncoder().encode(CheckCandidate(path: relativePath, contents: text))
            let reply: [String: JSONValue]
            do {
                reply = try daemon.ask(ControlInterface.Method.check, ["candidates": .array([candidate])])
            } catch let failure as Failure {
                throw Failure("the running daemon rejects it: \(failure.description)")
            }
            parts.append("checked by the running daemon (environment \(reply["environment"]?.stringValue ?? "?"))")
        }
        return parts.joined(separator: "; ")
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
    private func checkFiles(_ contents: Data) throws -> (environments: [String], unreadable: [String]) {
        var base = try location.options(directory: directory)
        base.candidateDocuments = [path: contents]
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
    private func environmentNames(_ base: EnvironmentOptions) throws -> [String] {
        if let environment = location.environment { return [environment] }
        let names: [String]
        do {
            names = try Environment.definedEnvironments(base)
        } catch {
            throw Failure("\(error)")
        }
        return names.isEmpty ? [BuildInfo.compiled.defaultEnvironment] : names
    }
}
