import ArgumentParser
package import Environments

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The command-line options both example daemons take, and the options they bootstrap with.
package struct ExampleArguments: ParsableArguments {
    @Option(
        name: .customLong("config-dir"),
        help:
            "The directory holding Environments.plist (default: $CONFIGURATION_DIRECTORY, else /etc/example-daemon; without a file, the built-in configuration)."
    )
    var configDirectory: String?

    @Option(help: "The environment to run in (default: $APP_ENVIRONMENT, else the build's: Debug or Release).")
    var environment: String?

    @Option(
        help:
            "The instance, for a template unit (example-daemon@NAME.service passes %i): its Instances entries apply above the environment (default: $APP_INSTANCE)."
    )
    var instance: String?

    /// Whether to print the declaration as JSON Schema and exit instead of running:
    /// ``ExampleDaemonRun/run(_:build:configure:more:)`` checks it before anything else.
    @Flag(
        help:
            "Print the daemon's settings as JSON Schema (what envctl schema prints) and exit; the Debian package installs it as /usr/share/example-daemon/schema.json."
    )
    package var printSchema = false

    /// Every option at its default, as an empty command line leaves them: no configuration
    /// directory, environment or instance of its own, and no schema to print. ArgumentParser
    /// needs it to parse; a caller parses a command line with `parse(_:)` instead.
    package init() {}

    /// The example's `EnvironmentOptions`: its name, the built-in configuration, the environment
    /// and instance from the command line, and the application's own rules for a reload.
    ///
    /// - Parameter build: The executable's `BuildInfo.embedded` (its Info.plist, embedded by
    ///   the EmbedInfoPlist plugin).
    package func environmentOptions(build: BuildInfo) -> EnvironmentOptions {
        var options = EnvironmentOptions(
            applicationName: "example-daemon", environment: environment, configDirectory: configDirectory,
            build: build)
        options.builtInConfiguration = BuiltInConfiguration.environments
        options.environmentOrigin = "selected with --environment"
        options.instance = instance
        // The settings, declared once: every load checks types, bounds, required keys and
        // unknown keys against them before `validate` runs.
        options.declaration = ExampleSettings.declaration
        options.validate = { snapshot in
            // The application's own rules, for what a declaration cannot say (one key against
            // the environment): a reload that breaks them is rejected. `rejected` names the
            // key, its file and the value, or <redacted> when the value is secret.
            if snapshot.environmentName == "Production", let url = snapshot[ExampleSettings.apiBaseURL],
                url.scheme?.lowercased() != "https"
            {
                throw EnvironmentError.rejected(
                    key: ExampleSettings.apiBaseURL.key, in: snapshot, reason: "must be an https URL in Production")
            }
        }
        return options
    }
}
