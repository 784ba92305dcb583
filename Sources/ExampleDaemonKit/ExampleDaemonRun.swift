import ArgumentParser
package import Environments
package import EnvironmentsDaemon
package import Logging
package import ServiceLifecycle
import SystemdSupport
import UnixSignals

/// The start and the run that both example daemons share, around what differs between them:
/// where the configuration comes from besides the files, and the services beside the worker.
package enum ExampleDaemonRun {
    /// Runs an example daemon until SIGTERM or SIGINT: prints the declaration as JSON Schema
    /// and returns, if asked (`--print-schema`); else traps SIGHUP first (a reload during
    /// start-up must not kill it), logs to the journal, lets `configure` complete the options
    /// (the fleet daemon adds the fleet's layer), bootstraps `Environment.shared` with them, and
    /// runs the configuration service (reloads on SIGHUP, file changes and the control socket;
    /// readiness and the watchdog) beside the ``Worker`` and the services `more` adds.
    ///
    /// `build` is the executable's `BuildInfo.embedded` (made by the `EmbedInfoPlist` plugin in
    /// each executable). A failure to start is logged as critical and exits with status 1.
    package static func run(
        _ arguments: ExampleArguments, build: BuildInfo,
        configure: (inout EnvironmentOptions, Logger) async throws -> Void = { _, _ in },
        more: (EnvironmentService) async -> [ServiceGroupConfiguration.ServiceConfiguration] = { _ in [] }
    ) async throws {
        if arguments.printSchema {
            print(ExampleSettings.declaration.jsonSchemaText(title: "example-daemon"))
            return
        }
        let reloadSignals = await ReloadSignals.trap()
        LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "example-daemon"))
        let logger = Logger(label: "example-daemon")

        let environment: Environment
        do {
            var options = arguments.environmentOptions(build: build)
            options.logger = logger  // the library logs through the application's logger
            try await configure(&options, logger)
            environment = try Environment.bootstrap(options)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }

        let service = EnvironmentService(environment: environment, reloadSignals: reloadSignals, logger: logger)
        let worker = Worker(environment: environment, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service), .init(service: worker)] + (await more(service)),
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}
