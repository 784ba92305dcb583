import Environments
import EnvironmentsDaemon
import Logging
import ServiceLifecycle
import Synchronization
import Vapor

/// Runs an `EnvironmentService` from the moment a Vapor application boots until it shuts
/// down: a `ServiceGroup` of its own, without signal handlers (Vapor's `serve` handles
/// `SIGTERM` and `SIGINT`), stopped gracefully from Vapor's shutdown.
final class EnvironmentServiceRunner: LifecycleHandler {
    private enum State {
        case idle
        case running(ServiceGroup, Task<Void, Never>)
        case stopped
    }

    let environment: Environments.Environment
    let configuration: VaporEnvironmentsConfiguration
    let logger: Logger
    private let state = Mutex(State.idle)

    init(environment: Environments.Environment, configuration: VaporEnvironmentsConfiguration, logger: Logger) {
        self.environment = environment
        self.configuration = configuration
        self.logger = logger
    }

    /// Starts the service and returns once its configuration is watched and `READY=1` is out.
    func willBootAsync(_ application: Application) async throws {
        let signals = configuration.reloadsOnHangup ? await ReloadSignals.trap() : nil
        guard let service = start(signals: signals) else { return }
        await service.waitUntilReady()
    }

    /// Stops the service gracefully (`STOPPING=1`, the control socket and state file removed).
    func shutdownAsync(_ application: Application) async {
        guard let (group, task) = takeRunning() else { return }
        await group.triggerGracefulShutdown()
        await task.value
    }

    /// For the synchronous `Application.boot()`: starts the service (`SIGHUP` not trapped:
    /// trapping it takes an asynchronous call) without waiting for it to be ready.
    func willBoot(_ application: Application) throws {
        _ = start(signals: nil)
    }

    /// For the synchronous `Application.shutdown()`: stops the service and waits for it.
    func shutdown(_ application: Application) {
        guard let (group, task) = takeRunning() else { return }
        let done = DispatchSemaphore(value: 0)
        Task {
            await group.triggerGracefulShutdown()
            await task.value
            done.signal()
        }
        done.wait()
    }

    /// Starts the service in a task of its own, once; `nil` when it was started before.
    private func start(signals: ReloadSignals?) -> EnvironmentService? {
        let (environment, configuration, logger) = (self.environment, self.configuration.service, self.logger)
        return state.withLock { state -> EnvironmentService? in
            guard case .idle = state else { return nil }
            let service = EnvironmentService(
                environment: environment, reloadSignals: signals, configuration: configuration, logger: logger)
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
            let task = Task {
                do {
                    try await group.run()
                } catch {
                    logger.error(
                        "the configuration service stopped; the application keeps its last configuration",
                        metadata: ["error": "\(error)"])
                }
            }
            state = .running(group, task)
            return service
        }
    }

    private func takeRunning() -> (ServiceGroup, Task<Void, Never>)? {
        state.withLock { state in
            guard case .running(let group, let task) = state else { return nil }
            state = .stopped
            return (group, task)
        }
    }
}
