import ArgumentParser
import Environments
import EnvironmentsDaemon
import Foundation

/// `envctl`: inspect, check and reload the configuration of a daemon that uses Environments.
@main
struct EnvCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "envctl",
        abstract: "Inspect, check and reload per-environment configuration (Environments.plist).",
        subcommands: [Show.self, Get.self, Check.self, Reload.self]
    )
}

/// Options every subcommand takes: where the files are and which environment to select.
///
/// When a running daemon's state file is found (`--state-file`, else
/// `$RUNTIME_DIRECTORY/environment-state.json`, else `/run/<app-name>/environment-state.json`),
/// what the options leave open is taken from it: the daemon's environment, configuration
/// directory and credentials directory. So `envctl show --app-name NAME` shows what the
/// daemon runs with.
struct LocationOptions: ParsableArguments {
    @Option(
        name: .customLong("config-dir"),
        help: "The directory holding Environments.plist (default: $CONFIGURATION_DIRECTORY, else /etc/<app-name>).")
    var configDirectory: String?

    @Option(help: "The environment to select (default: the running daemon's, else $APP_ENVIRONMENT, else the build's).")
    var environment: String?

    @Option(name: .customLong("app-name"), help: "The application name, for /etc/<app-name>/ and /run/<app-name>/.")
    var applicationName: String?

    @Option(
        help:
            "A running daemon's state file (default: $RUNTIME_DIRECTORY/environment-state.json, else /run/<app-name>/environment-state.json)."
    )
    var stateFile: String?

    /// The state file's path, explicit or by convention.
    var statePath: String? {
        if let stateFile { return stateFile }
        if let path = ReloadState.defaultPath() { return path }
        return applicationName.map { "/run/\($0)/\(ReloadState.defaultFileName)" }
    }

    /// The running daemon's state, if its state file is there (and belongs to `pid`, if given).
    func daemonState(pid: Int32? = nil) -> ReloadState? {
        guard let statePath, let state = try? ReloadState.read(from: statePath) else { return nil }
        if let pid, state.pid != pid { return nil }
        return state
    }

    /// Options for a load: the flags, completed from the daemon's state.
    func options(
        state: ReloadState?, processEnvironment: [String: String] = ProcessInfo.processInfo.environment
    ) -> EnvironmentOptions {
        var options = EnvironmentOptions(
            applicationName: applicationName ?? state?.applicationName ?? "envctl", environment: environment,
            configDirectory: configDirectory, processEnvironment: processEnvironment)
        if let state {
            options.environment = environment ?? state.environment
            options.configDirectory = configDirectory ?? state.resolvedDirectory ?? state.configDirectory
            // systemd 257 does not give ExecReload= the unit's $CREDENTIALS_DIRECTORY.
            let credentials = EnvironmentOptions.credentialsDirectoryVariable
            if options.processEnvironment[credentials] == nil, let directory = state.credentialsDirectory {
                options.processEnvironment[credentials] = directory
            }
        }
        return options
    }

    func load(state: ReloadState?) throws -> EnvironmentSnapshot {
        do {
            return try Environment(options: options(state: state)).snapshot
        } catch {
            throw Failure("\(error)")
        }
    }
}

/// A failure reported on stderr with exit status 1.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data(("envctl: " + message + "\n").utf8))
}

extension ParsableCommand {
    /// Runs `body`, printing a ``Failure`` to stderr and exiting with status 1.
    func reportingFailures(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as Failure {
            printError(failure.description)
            throw ExitCode(1)
        }
    }
}
