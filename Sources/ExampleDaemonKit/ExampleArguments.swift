import ArgumentParser
import Environments
import Foundation

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
        options.validate = { snapshot in
            // The application's own rules: a reload that breaks them is rejected. `rejected`
            // names the key, its file and the value, or <redacted> when the value is secret.
            let baseURL = snapshot.string("APIBaseUrl").flatMap { URL(string: $0) }
            guard let scheme = baseURL?.scheme, scheme == "http" || scheme == "https" else {
                throw EnvironmentError.rejected(
                    key: "APIBaseUrl", in: snapshot, reason: "must be an http or https URL")
            }
            let port = snapshot.int("ListenPort", default: 8080)
            guard (1...65535).contains(port) else {
                throw EnvironmentError.rejected(key: "ListenPort", in: snapshot, reason: "must be between 1 and 65535")
            }
        }
        return options
    }
}
