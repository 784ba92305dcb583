import Environments
import EnvironmentsDaemon
import Logging

/// The daemon's whole reload pipeline as the benchmarks run it, started and ready: an
/// `EnvironmentService` over an environment whose files are in `directory`, with its journal
/// entries sent to a `DatagramSink`, its state file and its control socket in `directory`, and
/// no sd_notify.
struct BenchmarkService {
    /// The control socket's path (served unless started with `controlSocket: false`).
    let socket: String
    private let running: Task<Void, any Error>

    private init(socket: String, running: Task<Void, any Error>) {
        self.socket = socket
        self.running = running
    }

    /// Starts the service and returns once it is ready.
    static func start(
        _ environment: Environment, in directory: String, journal: DatagramSink, watchFiles: Bool,
        controlSocket: Bool = true, reloadSignals: ReloadSignals? = nil
    ) async -> BenchmarkService {
        var configuration = EnvironmentService.Configuration()
        configuration.watchFiles = watchFiles
        configuration.stateFile = directory + "/environment-state.json"
        configuration.journalOutput = .socket(journal.path)
        configuration.systemdNotifications = false
        let socket = directory + "/configuration.varlink"
        configuration.controlSocket = controlSocket ? ControlSocketConfiguration(path: socket) : .disabled
        let service = EnvironmentService(
            environment: environment, reloadSignals: reloadSignals, configuration: configuration,
            logger: Logger(label: "environment-benchmarks"))
        let running = Task { try await service.run() }
        await service.waitUntilReady()
        return BenchmarkService(socket: socket, running: running)
    }

    /// Asks the service to stop (for a `defer`).
    func cancel() {
        running.cancel()
    }

    /// Stops the service and waits until it has.
    func stop() async {
        running.cancel()
        _ = try? await running.value
    }
}
