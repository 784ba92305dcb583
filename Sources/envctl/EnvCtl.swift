import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import FileDescriptorWriting
import JSONText
import TextEscaping
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// `envctl`: inspect, check and reload the configuration of a daemon that uses Environments.
@main
struct EnvCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "envctl",
        abstract: "Inspect, check and reload per-environment configuration (Environments.plist).",
        discussion: """
            With --pid, --socket, or --app-name alone, envctl asks the running daemon over its control \
            socket (varlink, $RUNTIME_DIRECTORY/\(ControlInterface.socketFileName)) what it runs with. \
            Otherwise, and with --config-dir or --environment, it reads the files itself, to check a \
            configuration before it is deployed. Without any of these (or a unit's \
            $CONFIGURATION_DIRECTORY) envctl asks which configuration to read; it does not guess. \
            Reading files, a ${credential:NAME} that cannot be read here (no $CREDENTIALS_DIRECTORY) \
            shows as <credential NAME: not readable here>. With etcd options (--etcd-endpoints, --etcd-prefix, \
            TLS and a user: envctl fleet status --help lists them) or $ENVIRONMENTS_ETCD_ENDPOINTS, the fleet's \
            documents are read below the files. The fleet's commands, publish and fleet, and those reads are \
            envctl-fleet's (built with the package trait Fleet), which envctl runs from beside itself or from PATH.
            """,
        version: LibraryVersion.current,
        subcommands: [
            Show.self, Get.self, Diff.self, History.self, Check.self, Reload.self, Edit.self, SetValue.self, Unset.self,
            Migrate.self, Publish.self, Fleet.self, Schema.self, Explain.self, Credential.self,
        ]
    )

    /// Parses the command line and runs the subcommand. A ``Failure`` from any of them is one
    /// line on stderr (`envctl: …`) and exit status 1; everything else (usage errors, `--help`,
    /// an `ExitCode` a subcommand chose) is ArgumentParser's.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            // `envctl publish …` and `envctl fleet …` are envctl-fleet's, whole.
            if let first = arguments.first, FleetTool.subcommands.contains(first) {
                try FleetTool.exec(first == "fleet" ? Array(arguments.dropFirst()) : arguments, for: "envctl \(first)")
            }
            // Etcd options of other commands are envctl-fleet's too (``FleetTool/documents()``).
            var command = try parseAsRoot(FleetTool.commandLine.rest)
            try command.run()
        } catch let failure as Failure {
            printError(failure.description)
            exit(withError: ExitCode(1))
        } catch {
            exit(withError: error)
        }
    }
}

/// Options every subcommand takes: which daemon to ask, or where the files are.
struct LocationOptions: ParsableArguments {
    @Option(
        name: .customLong("config-dir"),
        help:
            "Read the files in this directory instead of asking a daemon (default: $CONFIGURATION_DIRECTORY, else /etc/<app-name>); with a daemon named too, it must be the directory the daemon reads."
    )
    var configDirectory: String?

    @Option(
        help:
            "Read the files for this environment instead of asking a daemon (default: $APP_ENVIRONMENT, else envctl's build's: Debug or Release)."
    )
    var environment: String?

    @Option(
        help:
            "The instance (a template unit's %i): its daemon's socket (/run/<app-name>/<instance>/), and its Instances entries in the files (default: $APP_INSTANCE)."
    )
    var instance: String?

    @Option(
        name: .customLong("app-name"),
        help:
            "The application: its running daemon's socket (/run/<app-name>/) and the files it reads, else (said on stderr) its files in /etc/<app-name>/."
    )
    var applicationName: String?

    @Option(help: "Ask the daemon with this process id ($MAINPID in a unit file).")
    var pid: Int32?

    @Option(help: "Ask the daemon listening on this control socket.")
    var socket: String?

    @Option(help: "Seconds to wait for the daemon's answer.")
    var timeout: Double = 30

    /// What to read: a running daemon, or files.
    enum Target {
        case daemon(VarlinkClient)
        case files
    }

    /// What envctl says when nothing names what to read: it does not guess (its own name would
    /// be `/etc/envctl/`, which is no daemon's).
    static let nothingNamed = Failure(
        "which configuration? envctl reads no default: pass --app-name NAME (its running daemon, else the files in /etc/NAME/), "
            + "--config-dir DIR (the files in DIR), or --pid PID or --socket PATH (a running daemon)")

    /// Whether the command line (or the unit envctl runs in) names what to read: a daemon
    /// (`--pid`, `--socket`, `--app-name`), a directory (`--config-dir`), or
    /// `$CONFIGURATION_DIRECTORY`, which systemd sets for a unit's own commands
    /// (`ExecStartPre=envctl check`).
    func namesSomething(_ environmentVariables: [String: String]) -> Bool {
        pid != nil || socket != nil || applicationName != nil || configDirectory != nil
            || !(environmentVariables[EnvironmentOptions.configurationDirectoryVariable] ?? "").isEmpty
    }

    /// The socket of `--app-name`'s daemon (`--instance`'s, with one) by convention; `nil`
    /// without `--app-name`.
    func applicationSocket(_ environmentVariables: [String: String]) throws -> String? {
        guard let applicationName else { return nil }
        do {
            return try ControlSocketPath.forApplication(
                applicationName, instance: selectedInstance(environmentVariables)?.name,
                processEnvironment: environmentVariables)
        } catch {
            throw Failure("\(error)")
        }
    }

    /// How the environment read from files is chosen, for what envctl says about it.
    func environmentChoice(_ environmentVariables: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if environment != nil { return "--environment" }
        if !(environmentVariables["APP_ENVIRONMENT"] ?? "").isEmpty { return "$APP_ENVIRONMENT" }
        return "envctl's default; pass --environment NAME for another"
    }

    /// The daemon to ask, or the files. With `--socket` or `--pid` a daemon is required; with
    /// `--app-name` alone, its daemon is asked when its socket is there; `$RUNTIME_DIRECTORY`
    /// (an `ExecReload=` command's) names the unit's own daemon for `requireDaemon` commands.
    func target(requireDaemon: Bool = false) throws -> Target {
        let target = try findTarget(requireDaemon: requireDaemon)
        if case .daemon(let client) = target, configDirectory != nil {
            // Files named as well: they must be the daemon's, or a change would go elsewhere.
            _ = try daemonDirectory(try client.describe(), of: client)
        }
        return target
    }

    /// The instance: `--instance`, else `$APP_INSTANCE` (empty: none).
    func selectedInstance(_ environmentVariables: [String: String]) -> (name: String, origin: String)? {
        if let instance { return (instance, "--instance") }
        if let value = environmentVariables["APP_INSTANCE"], !value.isEmpty { return (value, "$APP_INSTANCE") }
        return nil
    }

    /// Checks `--app-name` and the instance, which become directories (``PathComponentName``).
    func checkNames(_ environmentVariables: [String: String] = ProcessInfo.processInfo.environment) throws {
        do {
            if let applicationName {
                _ = try PathComponentName(applicationName, kind: .applicationName, from: "--app-name")
            }
            if let (name, origin) = selectedInstance(environmentVariables) {
                _ = try PathComponentName(name, kind: .instance, from: origin)
            }
        } catch {
            throw Failure("\(error)")
        }
    }

    /// The directory the daemon on `client` that sent `reply` reads, absolute; when `--config-dir`
    /// names another directory (compared after resolving symbolic links), a failure naming both;
    /// when envctl does not trust that directory (``trustedDaemonDirectory(_:of:)``: the daemon's
    /// word alone does not do), a failure that says why.
    func daemonDirectory(_ reply: DescribeReply, of client: VarlinkClient) throws -> String {
        guard let directory = reply.configDirectory else {
            throw Failure("the daemon reads no configuration directory (it runs on its built-in configuration only)")
        }
        guard directory.hasPrefix("/") else {
            throw Failure(
                "the daemon reports its configuration directory as '\(directory)', relative to its own working directory, "
                    + "which envctl cannot know: restart it with an absolute --config-dir, or update it")
        }
        if let configDirectory {
            let given = EnvironmentOptions.absolute(
                configDirectory, against: EnvironmentOptions.workingDirectory ?? "/")
            guard let realGiven = Self.realPath(given), realGiven == Self.realPath(directory) else {
                throw Failure(
                    "--config-dir \(given) is not the directory the running daemon reads, \(directory): "
                        + "envctl reads and writes only where the daemon does; drop --config-dir, or name the daemon of that directory"
                )
            }
        }
        return try trustedDaemonDirectory(directory, of: client)
    }

    /// The process id of the daemon `client` asks: `--pid`, else the peer of a connection to its
    /// socket (`SO_PEERCRED`); `nil` when it cannot be told.
    func daemonProcess(_ client: VarlinkClient) -> Int32? {
        if let pid, socket == nil { return pid }
        guard let address = UnixSocket.address(client.path) else { return nil }
        let descriptor = UnixSocket.makeStreamSocket()
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard UnixSocket.connect(descriptor, to: address) == 0 else { return nil }
        return PeerCredentials.of(descriptor)?.pid
    }

    /// `realpath(3)` of `path`, or `nil` when it does not resolve.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// As ``target(requireDaemon:)``, without asking a daemon it finds where it reads.
    func findTarget(requireDaemon: Bool) throws -> Target {
        let environmentVariables = ProcessInfo.processInfo.environment
        try checkNames(environmentVariables)
        let explicit: String?
        if let socket {
            explicit = socket
        } else if let pid {
            guard let path = ControlSocketPath.forProcess(pid, processEnvironment: environmentVariables) else {
                throw Failure("cannot find the control socket of process \(pid); pass --socket")
            }
            explicit = path
        } else {
            explicit = nil
        }
        if let explicit { return .daemon(client(explicit, expectedProcess: socket == nil ? pid : nil)) }
        let readsFiles = configDirectory != nil || environment != nil || !FleetTool.commandLine.etcd.isEmpty
        if !readsFiles || requireDaemon {
            var candidates: [String] = []
            if let found = try applicationSocket(environmentVariables) { candidates.append(found) }
            if requireDaemon, let runtime = ControlSocketPath.runtimeDirectory(in: environmentVariables) {
                candidates.append(PathNames.join(runtime, ControlInterface.socketFileName))
            }
            if let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) {
                return .daemon(client(found))
            }
            if requireDaemon {
                let stale = candidates.compactMap {
                    DaemonProcess.staleStateNote(inDirectory: PathNames.directory(of: $0))
                }
                throw Failure(
                    "no daemon to ask: pass --pid, --app-name or --socket"
                        + (candidates.isEmpty ? "" : " (no socket at \(candidates.joined(separator: ", ")))")
                        + stale.map { "; " + $0 }.joined())
            }
            if let applicationName, let looked = candidates.first {
                // Asked for a daemon by name, and none runs: say so, and where the files are.
                let directory = ConfigurationLocation(
                    options: try localOptions(environmentVariables).anchoringPaths()
                ).directory
                printError(
                    "no running daemon of \(applicationName) (no socket at \(looked)): reading the files in \(directory) instead"
                )
            }
        }
        guard namesSomething(environmentVariables) else { throw Self.nothingNamed }
        return .files
    }

    private func client(_ path: String, expectedProcess: Int32? = nil) -> VarlinkClient {
        VarlinkClient(
            path: path, timeout: .milliseconds(Int64(Self.clampedTimeout(timeout) * 1000)),
            expectedProcess: expectedProcess, trust: peerTrust(),
            unansweredNote: { DaemonProcess.staleStateNote(inDirectory: PathNames.directory(of: $0)) })
    }

    /// `--timeout` between a millisecond and a day; `inf`, `nan` or `1e300` would trap in the
    /// conversion to milliseconds.
    static func clampedTimeout(_ seconds: Double) -> Double {
        seconds.isFinite ? min(max(seconds, 0.001), 86_400) : 86_400
    }

    /// Options for reading the files, with the fleet's documents below them when etcd options
    /// are given. A credential this shell cannot read (no `$CREDENTIALS_DIRECTORY`: systemd
    /// gives it to the daemon alone) reads as `<credential NAME: not readable here>`, a secret.
    ///
    /// Without `--app-name`, `--config-dir` or `$CONFIGURATION_DIRECTORY` there is nothing to
    /// read: ``nothingNamed``.
    ///
    /// - Parameter directory: The directory to read, the running daemon's: then nothing else
    ///   needs to name one.
    func options(
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment, directory: String? = nil
    ) throws -> EnvironmentOptions {
        var options = try localOptions(processEnvironment, directory: directory)
        if FleetTool.isRequested(processEnvironment) {
            options.sources = [FixedDocuments(held: try FleetTool.documents())]
        }
        return options
    }

    /// ``options(processEnvironment:)`` without the fleet's documents (which it reads from etcd).
    func localOptions(_ processEnvironment: [String: String], directory: String? = nil) throws
        -> EnvironmentOptions
    {
        try checkNames(processEnvironment)
        guard directory != nil || namesSomething(processEnvironment) else { throw Self.nothingNamed }
        // The name matters only for /etc/<name>/, which `--app-name` names; with a directory
        // given it is not used.
        var options = EnvironmentOptions(
            applicationName: applicationName ?? "envctl", environment: environment,
            configDirectory: directory ?? configDirectory, processEnvironment: processEnvironment)
        options.environmentOrigin = "selected with --environment"
        options.instance = instance
        options.unreadableCredentialsAsPlaceholders = true
        // What the application declares secret is secret in every output (DeclaredSecrets).
        options.secretKeys.formUnion(DeclaredSecrets.installed(applicationName))
        return options
    }

    /// ``options(processEnvironment:)`` in the directory the running daemon of `--app-name`
    /// reads, when it runs and no `--config-dir` is given: it may have been started with a
    /// `--config-dir` of its own, and `/etc/<app-name>/` is then not its configuration.
    func filesOptions(processEnvironment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> EnvironmentOptions
    {
        guard configDirectory == nil, let path = try applicationSocket(processEnvironment),
            FileManager.default.fileExists(atPath: path)
        else { return try options(processEnvironment: processEnvironment) }
        let daemon = client(path)
        let reply: DescribeReply
        do {
            reply = try daemon.describe()
        } catch let failure as Failure {
            // A socket left behind by a daemon that is gone: its files are still where they were.
            let directory = ConfigurationLocation(
                options: try localOptions(processEnvironment).anchoringPaths()
            ).directory
            printError("\(failure.description): reading the files in \(directory) instead")
            return try options(processEnvironment: processEnvironment)
        }
        var options = try options(
            processEnvironment: processEnvironment, directory: try daemonDirectory(reply, of: daemon))
        options.secretKeys.formUnion(DeclaredSecrets.daemon(daemon))
        return options
    }

    /// The configuration the files give.
    func load() throws -> EnvironmentSnapshot {
        do {
            return try Environment(options: filesOptions()).snapshot
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure("\(error)")
        }
    }
}

/// A failure reported on stderr with exit status 1: the editing engine's ``Failure``, which
/// every command throws.
typealias Failure = EnvironmentsEditing.Failure

/// Prints `message` on stderr after `envctl: `, on one line: control characters a key, value
/// or file name may hold are escaped (`\n`, `\u{1B}`: see `ControlCharacters`).
func printError(_ message: String) {
    writeToStandardError("envctl: " + ControlCharacters.escaped(message) + "\n")
}

/// Writes `text` whole on stderr, unbuffered (a prompt shows before envctl waits for input).
func writeToStandardError(_ text: String) {
    FileDescriptorWriter.write(text, to: FileDescriptorWriter.standardError)
}

/// Writes `bytes` whole on stdout, after what `print` has buffered there.
func writeToStandardOutput(_ bytes: Data) {
    fflush(nil)
    try? FileDescriptorWriter.writeAll(bytes, to: FileDescriptorWriter.standardOutput)
}

/// Prints one line on stdout with its control characters escaped, as every text output of
/// envctl does: no key, value or file name can drive the terminal or forge a line.
func printLine(_ line: String) {
    print(ControlCharacters.escaped(line))
}

extension VarlinkClient {
    /// Calls `method` and returns the reply's parameters; an error reply becomes a
    /// ``Failure`` that says what the daemon said.
    func ask(
        _ method: ControlInterface.Method, _ parameters: [String: JSONValue] = [:]
    ) throws -> [String: JSONValue] {
        let reply: VarlinkReply
        do {
            reply = try call(VarlinkCall(method: method.qualifiedName, parameters: parameters))
        } catch {
            throw Failure("\(error)")
        }
        if let error = reply.error { throw Failure(Self.explain(error, reply.parameters ?? [:])) }
        return reply.parameters ?? [:]
    }

    /// A daemon's error reply in a sentence.
    static func explain(_ error: String, _ parameters: [String: JSONValue]) -> String {
        switch error {
        case ControlInterface.Error.permissionDenied.qualifiedName:
            return "permission denied: \(parameters["reason"]?.stringValue ?? "not allowed")"
        case ControlInterface.Error.noSuchSetting.qualifiedName:
            return "the daemon has no setting '\(parameters["key"]?.stringValue ?? "?")'"
        case ControlInterface.Error.configurationRejected.qualifiedName:
            return "configuration rejected: "
                + (parameters["error"]?.objectValue?["description"]?.stringValue ?? "no reason given")
        case ControlInterface.Error.reloadRejected.qualifiedName:
            let verdict = parameters["verdict"]?.objectValue
            return "reload rejected by the daemon: "
                + (verdict?["error"]?.objectValue?["description"]?.stringValue ?? "no reason given")
        case ControlInterface.Error.tooManyConnections.qualifiedName:
            return "the daemon takes no more connections: "
                + (parameters["reason"]?.stringValue ?? "too many are open")
        case VarlinkServiceError.expectedMore.qualifiedName:
            return "the daemon's answer is too long for one reply; ask for it in parts (varlink's more)"
        default:
            let details = parameters.isEmpty ? "" : " \(parameters)"
            return "the daemon answered \(error)\(details)"
        }
    }
}
