import ArgumentParser
import Environments
import EnvironmentsDaemon
import EnvironmentsEtcd
import EtcdFleetArguments
import EtcdFleetClient
import ExampleDaemonKit
import Logging
import ServiceLifecycle
import SystemdSupport

/// The example daemon in fleet mode: the shared configuration in etcd (or its local cache)
/// below this host's files, applied live through a watch.
@main
struct ExampleFleetDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-fleet-daemon",
        abstract: "The example daemon with its fleet's configuration from etcd, below this host's files.",
        version: LibraryVersion.current)

    @OptionGroup var arguments: ExampleArguments

    @OptionGroup var etcd: EtcdArguments

    func run() async throws {
        if arguments.printSchema {
            print(ExampleSettings.declaration.jsonSchemaText(title: "example-daemon"))
            return
        }
        // First of all: a SIGHUP during start-up must not kill the daemon.
        let reloadSignals = await ReloadSignals.trap()
        LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "example-daemon"))
        let logger = Logger(label: "example-daemon")

        let environment: Environment
        let fleet: EtcdFleet
        do {
            guard let etcd = try etcd.configuration() else {
                throw ValidationError(
                    "fleet mode needs --etcd-endpoints (or $ENVIRONMENTS_ETCD_ENDPOINTS); without a fleet, run example-daemon"
                )
            }
            // The fleet's documents from etcd, else from the local cache, as the layer below the files.
            fleet = try await EtcdFleet.connect(etcd, logger: logger)
            var options = arguments.environmentOptions(build: .embedded)
            fleet.apply(to: &options)
            environment = try Environment.bootstrap(options)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }

        let service = EnvironmentService(environment: environment, reloadSignals: reloadSignals, logger: logger)
        let worker = Worker(environment: environment, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: service), .init(service: worker),
                    // The watch: every change in etcd goes through the same reload as a file change.
                    .init(service: await fleet.service(for: service)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}
