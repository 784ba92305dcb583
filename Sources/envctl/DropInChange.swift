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

/// A change to one drop-in that `edit`, `set`, `unset` and `migrate` check before they install
/// it: the engine's ``DropInEditor``, in the directory that the command line names, checked by
/// the running daemon found there (`--app-name`, `--pid`, `--socket`) over its control socket.
typealias DropInChange = DropInEditor

extension DropInEditor {
    /// The drop-in `name` (with or without `.plist`; default ``defaultName``) in the directory of
    /// the daemon that `location` finds (its `Describe` says where: exactly where it reads),
    /// else in the directory the files are read from, made absolute.
    ///
    /// A daemon named explicitly (`--pid`, `--socket`) must answer; `--config-dir` with a daemon
    /// must name the daemon's directory. What the check relies on is recorded now (the daemon's
    /// environment, instance and directory, or that none was found) and compared with what is
    /// true when the change is installed (``verifyDaemon``).
    init(location: LocationOptions, dropIn: String?) throws {
        _ = try Self.fileName(dropIn, origin: "--drop-in")
        try location.checkNames()
        let target: LocationOptions.Target
        if location.pid != nil || location.socket != nil {
            target = try location.findTarget(requireDaemon: true)
        } else {
            // `--app-name` alone: its daemon when it runs, else the files.
            target = (try? location.findTarget(requireDaemon: true)) ?? .files
        }
        let directory: String
        let daemon: DaemonLink?
        if case .daemon(let client) = target {
            let reply = try client.describe()
            directory = try location.daemonDirectory(reply, of: client)
            daemon = DaemonLink(
                client: client,
                began: DaemonState(
                    environment: reply.environment, instance: reply.instance, directory: directory,
                    process: location.daemonProcess(client)))
        } else {
            let options = try location.options().anchoringPaths()
            directory = ConfigurationLocation(options: options).directory
            daemon = nil
            if let name = location.applicationName, location.configDirectory == nil {
                printError(
                    "no running daemon of \(name) to check the change: changing the files in \(directory), checked by envctl alone"
                )
            }
        }
        // The daemon's declared secrets are secret in every load of the change (DeclaredSecrets).
        let daemonSecrets = DeclaredSecrets.daemon(daemon?.client)
        try self.init(
            directory: directory, dropIn: dropIn, origin: "--drop-in", onlyEnvironment: location.environment,
            daemon: daemon,
            options: {
                var options = try location.options(directory: directory)
                options.secretKeys.formUnion(daemonSecrets)
                return options
            })
        note = { printError($0) }
        verifyDaemon = { try DaemonLink.verify(daemon, location: location, directory: directory) }
    }

    /// The running daemon's client, if the change is checked with one.
    var client: VarlinkClient? { (daemon as? DaemonLink)?.client }
}

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

/// The running daemon a change is checked with, over its control socket, as it was when the
/// change began.
struct DaemonLink: RunningDaemon {
    let client: VarlinkClient
    /// The daemon when the change began.
    let began: DaemonState

    var environment: String { began.environment }
    var instance: String? { began.instance }

    /// Asks the daemon's `Check` with the candidates; the environment it checked.
    func check(candidates: [String: String]) throws -> String {
        var records: [JSONValue] = []
        for (path, text) in candidates.sorted(by: { $0.key < $1.key }) {
            records.append(try JSONValueEncoder().encode(CheckCandidate(path: path, contents: text)))
        }
        let reply: [String: JSONValue]
        do {
            reply = try client.ask(.check, ["candidates": .array(records)])
        } catch let failure as Failure {
            throw Failure("the running daemon rejects it: \(failure.description)")
        }
        // Restarted into another environment between the question and this check: its
        // answer is for an environment that the files' check left to it, not that one.
        let checkedEnvironment = reply["environment"]?.stringValue ?? "?"
        if checkedEnvironment != began.environment {
            throw DropInEditor.DaemonChanged(
                description:
                    "the daemon now runs environment \(checkedEnvironment), not \(began.environment) as when this change began, so \(began.environment) was checked by no one"
            )
        }
        return checkedEnvironment
    }

    /// The daemon's own variables and overrides: not in envctl's environment, but in its answer.
    func outweighingSources() -> [String: String] {
        guard let reply = try? client.describe() else { return [:] }
        var sources: [String: String] = [:]
        for setting in reply.settings where ["environmentVariable", "override"].contains(setting.source.layer) {
            sources[setting.key] =
                setting.source.layer == "override" ? "a runtime override" : "$\(setting.source.section ?? "?")"
        }
        return sources
    }

    /// Compares the daemon now with the one the change began with (`daemon`, `nil`: none).
    ///
    /// - Throws: ``DropInEditor/DaemonChanged`` when it is gone or does not answer, runs another
    ///   environment or instance, or reads another directory; or when none ran and one of
    ///   `location`'s reads `directory` now (its own validation would not have been asked).
    static func verify(_ daemon: DaemonLink?, location: LocationOptions, directory: String) throws {
        guard let daemon else {
            // Only where the start looked for one without requiring it (`--app-name`, or the
            // unit's `$RUNTIME_DIRECTORY`): `--pid` and `--socket` require one at the start.
            guard case .daemon(let client)? = try? location.findTarget(requireDaemon: true),
                let reply = try? client.describe(), let found = reply.configDirectory,
                let now = LocationOptions.realPath(found), now == LocationOptions.realPath(directory)
            else { return }
            let state = DaemonState(
                environment: reply.environment, instance: reply.instance, directory: found,
                process: location.daemonProcess(client))
            throw DropInEditor.DaemonChanged(
                description:
                    "a daemon started on \(directory) while this change was made (\(state.summary)); none ran when it began, so its own check was not asked for"
            )
        }
        let began = daemon.began
        let reply: DescribeReply
        do {
            reply = try daemon.client.describe()
        } catch let failure as Failure {
            throw DropInEditor.DaemonChanged(
                description:
                    "the daemon this change is checked with (\(began.summary), socket \(daemon.client.path)) no longer answers: \(failure.description)"
            )
        }
        let now = DaemonState(
            environment: reply.environment, instance: reply.instance,
            directory: reply.configDirectory ?? "(none)", process: location.daemonProcess(daemon.client))
        guard now == began else {
            var message =
                "the daemon was restarted while this change was made: it now runs \(now.summary), not \(began.summary) as when the change began"
            if now.directory != began.directory { message += ", and reads \(now.directory), not \(began.directory)" }
            if now.environment != began.environment {
                message += "; \(began.environment) would be left to a check without the daemon's own validation"
            }
            throw DropInEditor.DaemonChanged(description: message)
        }
    }
}
