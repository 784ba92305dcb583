import ArgumentParser
import Environments
import EnvironmentsDaemon
import EnvironmentsEtcd
import EtcdFleetClient
import Foundation
import Logging
import ServiceLifecycle
import SystemdSupport

/// An example daemon: reads `APIBaseUrl` through `Environment.shared.fetch`, logs it at start
/// and after every applied reload, and stays live under systemd.
@main
struct ExampleDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-daemon",
        abstract: "An example daemon that shows live per-environment configuration under systemd.",
        version: LibraryVersion.current)

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

    @Option(
        name: .customLong("etcd-endpoints"),
        help:
            "Fleet mode: read the shared configuration from these etcd members, below this host's files (URL[,URL...]; default: $ENVIRONMENTS_ETCD_ENDPOINTS)."
    )
    var etcdEndpoints: String?

    @Option(
        name: .customLong("etcd-prefix"),
        help: "The fleet's key prefix in etcd (default: $ENVIRONMENTS_ETCD_PREFIX), e.g. /fleet/example-daemon/.")
    var etcdPrefix: String?

    func run() async throws {
        // First of all: a SIGHUP during start-up must not kill the daemon.
        let reloadSignals = await ReloadSignals.trap()
        LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "example-daemon"))
        let logger = Logger(label: "example-daemon")

        var options = EnvironmentOptions(
            applicationName: "example-daemon", environment: environment, configDirectory: configDirectory,
            build: .embedded)
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
        let environment: Environment
        let fleet: EtcdFleet?
        do {
            // Fleet mode: the shared configuration in etcd (or its local cache) below the host's files.
            if let etcd = try EtcdConfiguration.resolve(endpoints: etcdEndpoints, prefix: etcdPrefix) {
                fleet = try await EtcdFleet.connect(etcd, logger: logger)
                options.baseLayer = fleet?.layer
            } else {
                fleet = nil
            }
            environment = try Environment.bootstrap(options)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }

        let service = EnvironmentService(environment: environment, reloadSignals: reloadSignals, logger: logger)
        let worker = Worker(environment: environment, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: service), .init(service: worker),
        ]
        if let fleet { services.append(.init(service: await fleet.service(for: service))) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}

/// The daemon's "work": report the configuration it runs with, and a debug heartbeat.
struct Worker: Service, CustomStringConvertible {
    let environment: Environment
    let logger: Logger
    var description: String { "Worker" }

    func run() async throws {
        let changes = environment.changes()
        report()
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes.cancelOnGracefulShutdown() { report() }
            }
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    let interval = Environment.shared.duration("HeartbeatInterval", default: .seconds(60))
                    logger.debug(
                        "heartbeat", metadata: ["generation": "\(Environment.shared.generation)"])
                    try? await Task.sleep(for: max(interval, .milliseconds(100)))
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }

    private func report() {
        let snapshot = Environment.shared.snapshot
        let baseURL = Environment.shared.fetch("APIBaseUrl") as? String ?? "<unset>"
        logger.info(
            "APIBaseUrl=\(baseURL) generation=\(snapshot.generation) environment=\(snapshot.environmentName)",
            metadata: [
                "api_base_url": "\(baseURL)", "generation": "\(snapshot.generation)",
                "request_timeout": "\(Environment.shared.duration("RequestTimeout", default: .seconds(5)))",
                "listen_port": "\(Environment.shared.int("ListenPort", default: 8080))",
            ])
    }
}
