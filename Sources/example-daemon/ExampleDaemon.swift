import ArgumentParser
import Environments
import EnvironmentsDaemon
import ExampleDaemonKit
import Logging
import ServiceLifecycle
import SystemdSupport

/// An example daemon: reads `APIBaseUrl` through `Environment.shared.fetch`, logs it at start
/// and after every applied reload, and stays live under systemd. `example-fleet-daemon` is the
/// same daemon with the fleet's configuration from etcd below the host's files.
@main
struct ExampleDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-daemon",
        abstract: "An example daemon that shows live per-environment configuration under systemd.",
        version: LibraryVersion.current)

    @OptionGroup var arguments: ExampleArguments

    func run() async throws {
        if arguments.printSchema {
            print(ExampleSettings.declaration.jsonSchemaText(title: "example-daemon"))
            return
        }
        // First of all: a SIGHUP during start-up must not kill the daemon.
        let reloadSignals = await ReloadSignals.trap()
        LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "example-daemon"))
        let logger = Logger(label: "example-daemon")

        var options = arguments.environmentOptions(build: .embedded)
        options.logger = logger  // the library logs through the application's logger
        let environment: Environment
        do {
            environment = try Environment.bootstrap(options)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }

        // Reloads on SIGHUP, file changes and the control socket; readiness and the watchdog.
        let service = EnvironmentService(environment: environment, reloadSignals: reloadSignals, logger: logger)
        let worker = Worker(environment: environment, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service), .init(service: worker)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}
