import ArgumentParser
import Environments
import EnvironmentsDaemon
import Logging
import ServiceLifecycle
import SystemdSupport

/// The daemon's settings, declared once: every load and reload checks the files against them
/// (types, bounds, misspelt keys), and `envctl explain KEY` describes them.
enum Settings {
    static let greeting = Setting<String>(
        "Greeting", default: "Hello", summary: "What the daemon says at every interval")
    static let greetingInterval = Setting<Duration>(
        "GreetingInterval", default: .seconds(10), bounds: .range(.milliseconds(100)...(.seconds(3600))),
        summary: "How often the daemon says it")
    static let logLevel = Setting<String>(
        "LogLevel", default: "info",
        bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"),
        summary: "The lowest level logged (it follows reloads)")

    static let declaration = SettingsDeclaration([greeting, greetingInterval, logLevel])
}

@main
struct MinimalDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "minimal-daemon", abstract: "A minimal daemon with live configuration.", version: "0.1.0")

    @Option(
        name: .customLong("config-dir"),
        help: "The directory holding Environments.plist (default: $CONFIGURATION_DIRECTORY, else /etc/minimal-daemon).")
    var configDirectory: String?

    @Option(help: "The environment to run in (default: $APP_ENVIRONMENT, else the build's: Debug or Release).")
    var environment: String?

    func run() async throws {
        // First of all: a SIGHUP (systemctl reload) during start-up must not kill the daemon.
        let reloadSignals = await ReloadSignals.trap()
        // The journal under systemd; readable lines on stderr elsewhere.
        LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "minimal-daemon"))
        let logger = Logger(label: "minimal-daemon")

        var options = EnvironmentOptions(
            applicationName: "minimal-daemon", environment: environment, configDirectory: configDirectory)
        options.logger = logger  // the library logs through the application's logger
        options.declaration = Settings.declaration
        let environment: Environment
        do {
            environment = try Environment.bootstrap(options)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }

        // Reloads (SIGHUP, file changes, envctl reload), READY=1, the watchdog, the journal.
        let service = EnvironmentService(environment: environment, reloadSignals: reloadSignals, logger: logger)
        let greeter = Greeter(environment: environment, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service), .init(service: greeter)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}
