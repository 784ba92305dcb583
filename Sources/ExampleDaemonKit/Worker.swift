package import Environments
package import Logging
import ServiceLifecycle

/// The example daemons' "work": report the configuration they run with, and a debug heartbeat.
package struct Worker: Service, CustomStringConvertible {
    let environment: Environment
    let logger: Logger
    /// The name swift-service-lifecycle's `ServiceGroup` logs for this service.
    package var description: String { "Worker" }

    /// A worker for the environment the daemon bootstrapped.
    ///
    /// - Parameters:
    ///   - environment: The environment whose changes the worker follows: the one
    ///     `Environment.bootstrap` returned, since the values it logs come from
    ///     `Environment.shared`.
    ///   - logger: Where the reports (info) and the heartbeats (debug) go.
    package init(environment: Environment, logger: Logger) {
        self.environment = environment
        self.logger = logger
    }

    /// Logs the configuration it runs with (the API's base URL, generation, environment, request
    /// timeout and listen port) at the start and after every change, and a heartbeat every
    /// `HeartbeatInterval`, until a graceful shutdown or cancellation; then returns.
    ///
    /// It never throws: cancellation ends it as a graceful shutdown does.
    package func run() async throws {
        let changes = environment.changes()
        report()
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in changes.cancelOnGracefulShutdown() { report() }
            }
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    let interval = Environment.shared[ExampleSettings.heartbeatInterval]
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
        let baseURL = Environment.shared.fetch("APIBaseUrl") as? String ?? "<unset>"  // as the iOS pattern reads it
        logger.info(
            "APIBaseUrl=\(baseURL) generation=\(snapshot.generation) environment=\(snapshot.environmentName)",
            metadata: [
                "api_base_url": "\(baseURL)", "generation": "\(snapshot.generation)",
                "request_timeout": "\(snapshot[ExampleSettings.requestTimeout])",
                "listen_port": "\(snapshot[ExampleSettings.listenPort])",
            ])
    }
}
