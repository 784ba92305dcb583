import ArgumentParser
import Environments
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
struct LocationOptions: ParsableArguments {
    @Option(
        name: .customLong("config-dir"),
        help: "The directory holding Environments.plist (default: $CONFIGURATION_DIRECTORY, else /etc/<app-name>).")
    var configDirectory: String?

    @Option(help: "The environment to select (default: $APP_ENVIRONMENT, else the build's).")
    var environment: String?

    @Option(name: .customLong("app-name"), help: "The application name, for /etc/<app-name>/.")
    var applicationName: String = "envctl"

    func options(processEnvironment: [String: String] = ProcessInfo.processInfo.environment) -> EnvironmentOptions {
        EnvironmentOptions(
            applicationName: applicationName, environment: environment, configDirectory: configDirectory,
            processEnvironment: processEnvironment)
    }

    func load() throws -> EnvironmentSnapshot {
        do {
            return try Environment(options: options()).snapshot
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
