import Environments
import Logging
import ServiceLifecycle

/// The daemon's own work: says `Greeting` every `GreetingInterval`, reading both afresh each
/// time, so a reload takes effect without a restart. Stops on graceful shutdown.
struct Greeter: Service {
    let environment: Environment
    let logger: Logger

    func run() async throws {
        let changes = environment.changes()
        await withTaskGroup(of: Void.self) { group in
            // Every applied change, at once (a rejected reload changes nothing and is not here).
            group.addTask {
                for await change in changes.cancelOnGracefulShutdown() {
                    logger.info(
                        "configuration changed: \(change.changedKeys.joined(separator: ", "))",
                        metadata: ["generation": "\(change.current.generation)"])
                    greet()
                }
            }
            // The work: a new interval applies from the next greeting on.
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    greet()
                    try? await Task.sleep(for: environment[Settings.greetingInterval])
                }
            }
            // SIGTERM or SIGINT (ServiceGroup's graceful shutdown): stop both.
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }

    private func greet() {
        logger.info("\(environment[Settings.greeting])", metadata: ["generation": "\(environment.snapshot.generation)"])
    }
}
