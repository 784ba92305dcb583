#if Vapor
    import Environments
    import EnvironmentsDaemon
    import Locking
    import Logging
    import ServiceLifecycle
    import ThreadBridge
    import Vapor

    /// Runs an `EnvironmentService` from the moment a Vapor application boots until it shuts
    /// down: a `ServiceGroup` of its own, without signal handlers (Vapor's `serve` handles
    /// `SIGTERM` and `SIGINT`), stopped gracefully from Vapor's shutdown.
    ///
    /// With `EnvironmentService.Readiness.whenApplicationServes` (the integration's default), it
    /// wraps the server the application configured in a ``ServingAnnouncer`` once the application
    /// has booted, so that `READY=1` goes out once Vapor's server accepts connections.
    final class EnvironmentServiceRunner: LifecycleHandler {
        private enum State {
            case idle
            case running(ServiceGroup, Task<Void, Never>)
            case stopped
        }

        let environment: Environments.Environment
        let configuration: VaporEnvironmentsConfiguration
        let logger: Logger
        private let state = Locked(State.idle)
        /// The service started in `willBoot`, for `didBoot` to wrap the server.
        private let started = Locked<EnvironmentService?>(nil)

        init(environment: Environments.Environment, configuration: VaporEnvironmentsConfiguration, logger: Logger) {
            self.environment = environment
            self.configuration = configuration
            self.logger = logger
        }

        /// Starts the service and returns once its configuration is watched: `READY=1` is out then
        /// with `.whenConfigured`, and goes out once the server serves with `.whenApplicationServes`.
        func willBootAsync(_ application: Application) async throws {
            let signals = configuration.reloadsOnHangup ? await ReloadSignals.trap() : nil
            guard let service = start(signals: signals) else { return }
            await service.waitUntilWatching()
        }

        /// Wraps the application's server once every handler has booted (routes and middleware are
        /// all registered: Vapor's HTTP server takes its responder when it is made).
        func didBootAsync(_ application: Application) async throws {
            try didBoot(application)
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

        /// With `.whenApplicationServes`: the application's server (the one it configured, which
        /// Vapor's `serve` command starts) tells the service once it serves.
        func didBoot(_ application: Application) throws {
            guard configuration.service.readiness == .whenApplicationServes,
                let service = started.withLock({ $0.take() })
            else { return }
            let base = application.server
            application.servers.use { _ in ServingAnnouncer(base: base, service: service) }
        }

        /// For the synchronous `Application.shutdown()`: stops the service and waits for it.
        func shutdown(_ application: Application) {
            guard let (group, task) = takeRunning() else { return }
            // Vapor calls this on its own thread, never on Swift's cooperative pool.
            try? TaskWaiter.wait {
                await group.triggerGracefulShutdown()
                await task.value
            }
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
                started.withLock { $0 = service }
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
#endif
