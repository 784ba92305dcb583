package import CoreMetrics
public import Environments
import EnvironmentsControl
import FileWatching
public import Logging
public import ServiceLifecycle
public import SystemdSupport
import UnixSignals

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A swift-service-lifecycle `Service` that keeps an `Environment` live under
/// systemd: reload on `SIGHUP` and on file change, `sd_notify` readiness, reload and stop
/// notifications, watchdog pings, the log level from `LogLevel`, and the effective settings
/// in the journal.
///
/// ```swift
/// let signals = await ReloadSignals.trap()          // first: SIGHUP must never kill us
/// LoggingSystem.bootstrap(JournalLogHandler.factory())
/// let environment = try Environment.bootstrap(EnvironmentOptions())
/// let service = EnvironmentService(environment: environment, reloadSignals: signals, logger: logger)
/// let group = ServiceGroup(services: [service, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
///
/// A service that listens on a port tells systemd it is ready once it accepts connections,
/// not before: set ``Configuration/readiness`` to ``Readiness/whenApplicationServes`` and call
/// ``applicationIsServing()`` when the server runs (Hummingbird's `onServerRunning`), so that
/// units ordered after it never start against a port that is not open yet, and a start whose
/// bind fails never says `READY=1`.
public struct EnvironmentService: Service, CustomStringConvertible {
    /// How the service behaves.
    public struct Configuration: Sendable {
        /// Watch the configuration files and reload when they change.
        public var watchFiles: Bool = true
        /// Quiet time that ends a burst of file events.
        public var debounce: Duration = .milliseconds(50)
        /// Where to publish a JSON record of the configuration and the last reload, for scripts
        /// and monitoring that read files; `$RUNTIME_DIRECTORY/environment-state.json` by
        /// default, `nil` for none. `envctl` asks the control socket instead.
        public var stateFile: String? = ReloadState.defaultPath()
        /// Send `READY=1` when the service starts (with ``systemdNotifications``); tests turn it
        /// off to hold a service before it is ready.
        package var notifyReady: Bool = true
        /// When `READY=1` goes out: once the configuration is watched
        /// (``Readiness/whenConfigured``, the default), or once it is watched and the
        /// application said it serves (``Readiness/whenApplicationServes``, with
        /// ``EnvironmentService/applicationIsServing()``).
        public var readiness: Readiness = .whenConfigured
        /// Ping the systemd watchdog when `WATCHDOG_USEC` asks for it (with
        /// ``systemdNotifications``).
        package var watchdog: Bool = true
        /// Where configuration events go (the journal, when there is one).
        public var journalOutput: JournalLogHandler.Output = .automatic()
        /// The log level control that follows `LogLevel` (and varlink's `SetLogLevel`): the one
        /// every `JournalLogHandler` follows; `nil` leaves levels alone (a test that runs
        /// several services in one process).
        package var levelControl: LogLevelControl? = .shared
        /// Send notifications to systemd (`NOTIFY_SOCKET`): readiness, reloads, watchdog pings,
        /// stopping. Turn it off for a service that runs inside another program's process,
        /// such as a test, where the socket is not the service's to use.
        public var systemdNotifications: Bool = true
        /// The varlink control socket that `envctl` and `varlinkctl` ask.
        public var controlSocket: ControlSocketConfiguration = ControlSocketConfiguration()
        /// Makes the reload metrics (`environments_reloads_total`, ...); `nil` for the factory the
        /// process bootstrapped with `MetricsSystem.bootstrap`, which is how applications choose
        /// a backend. Tests give each service its own.
        package var metricsFactory: (any MetricsFactory)?

        /// The default configuration.
        public init() {}
    }

    /// Runs every reload and reports it (journal, `STATUS=`, state file, control socket).
    package let reloader: ConfigurationReloader
    let environment: Environment
    let signals: ReloadSignals?
    let configuration: Configuration
    let logger: Logger

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - environment: The environment to keep live.
    ///   - reloadSignals: `SIGHUP`, trapped early with ``ReloadSignals/trap()``; `nil` to not
    ///     reload on signals.
    ///   - configuration: How the service behaves.
    ///   - logger: Where the service logs.
    public init(
        environment: Environment, reloadSignals: ReloadSignals?, configuration: Configuration = Configuration(),
        logger: Logger
    ) {
        self.environment = environment
        self.signals = reloadSignals
        self.configuration = configuration
        self.logger = logger
        self.reloader = ConfigurationReloader(
            environment: environment,
            notifier: configuration.systemdNotifications ? SystemdNotifier(logger: logger) : .disabled,
            reporter: ConfigurationReporter(
                output: configuration.journalOutput, logger: logger,
                showCommand:
                    "envctl show --app-name \(environment.options?.applicationName ?? EnvironmentOptions.executableName)"
                    + (environment.options?.selectedInstance.map { " --instance \($0)" } ?? "")),
            stateFile: configuration.stateFile, levelControl: configuration.levelControl,
            logLevelKey: environment.options?.logLevelKey ?? "LogLevel", logger: logger,
            metricsFactory: configuration.metricsFactory,
            waitsForApplication: configuration.readiness == .whenApplicationServes)
    }

    /// Returns once the service is ready: `READY=1` is out (or would be, without
    /// ``Configuration/systemdNotifications``).
    ///
    /// With ``Readiness/whenConfigured``, that is once ``run()`` has loaded the configuration
    /// and watches the files: from then on every change is applied. With
    /// ``Readiness/whenApplicationServes``, it is also after the application called
    /// ``applicationIsServing()``; a caller that starts the server must not wait for this
    /// before it does, or it waits until the service stops. A service that stops before it is
    /// ready (its server never served) returns from this too.
    public func waitUntilReady() async {
        await reloader.waitUntilReady()
    }

    /// Says that the application accepts connections: with ``Readiness/whenApplicationServes``,
    /// `READY=1` (with `STATUS=`) goes out now, or, if the configuration is not watched yet,
    /// as soon as it is.
    ///
    /// Call it once the server listens: from Hummingbird's `onServerRunning`, or after Vapor's
    /// `Server.start(address:)` returns (the EnvironmentsVapor integration does it). A server
    /// that cannot bind never calls it, so systemd never hears `READY=1` and the start fails
    /// when the process exits. Calls after the first, and calls with ``Readiness/whenConfigured``,
    /// change nothing. It may come before ``run()`` starts.
    ///
    /// ```swift
    /// var configuration = EnvironmentService.Configuration()
    /// configuration.readiness = .whenApplicationServes
    /// let service = EnvironmentService(
    ///     environment: environment, reloadSignals: signals, configuration: configuration, logger: logger)
    /// let app = Application(router: router, onServerRunning: { _ in await service.applicationIsServing() })
    /// ```
    public func applicationIsServing() async {
        await reloader.applicationIsServing()
    }

    /// Returns once ``run()`` has loaded the configuration and watches the files (or found
    /// that it cannot), whether or not `READY=1` waits for the application: from then on every
    /// change is applied. For an integration that starts the server after this.
    package func waitUntilWatching() async {
        await reloader.waitUntilWatching()
    }

    /// Runs until graceful shutdown (or cancellation); sends `STOPPING=1` on the way out.
    ///
    /// A stop does not wait for a reload in progress: its build (which runs on a thread of its
    /// own, whatever it does: a slow file system, a `validate` that hangs) is abandoned and
    /// never takes effect, so the service returns at once and the configuration stays the one
    /// in service.
    ///
    /// `READY=1` goes out once the files are watched (so that no edit made after
    /// `systemctl start` returns can be missed) and, with ``Readiness/whenApplicationServes``,
    /// the application called ``applicationIsServing()``; signals that arrived earlier are
    /// handled then. A reload before `READY=1` (a control call, a file change) applies, but
    /// sends systemd neither `RELOADING=1` nor `READY=1`.
    public func run() async throws {
        let reloader = self.reloader
        let notifyReady = configuration.notifyReady
        await reloader.start()
        // Bound before READY=1, so that whoever waits for readiness can ask at once.
        let controlServer = makeControlServer()
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                if configuration.watchFiles, let watcher = makeWatcher() {
                    group.addTask {
                        await Self.watch(with: watcher, reloader: reloader, notifyReady: notifyReady, logger: logger)
                    }
                } else if notifyReady {
                    await reloader.configurationIsWatched()
                }
                if let signals {
                    group.addTask { await Self.follow(signals, reloader: reloader, notifyReady: notifyReady) }
                }
                if let controlServer {
                    group.addTask { await controlServer.run() }
                }
                if configuration.watchdog && configuration.systemdNotifications {
                    group.addTask { await Watchdog(notifier: SystemdNotifier(logger: logger)).run() }
                }
                try? await gracefulShutdown()
                // Before the tasks end: one may be waiting for a build that does not end soon,
                // or for a readiness that never comes (a server that could not bind).
                reloader.abandonReloads()
                group.cancelAll()
                await reloader.releaseWaiters()
            }
        } onGracefulShutdown: {
            if configuration.systemdNotifications { SystemdNotifier(logger: logger).stopping(status: "Stopping") }
        }
        // A clean stop: no state file may describe this daemon any more (the socket goes too).
        await reloader.stop()
    }

    /// Watches the files until cancelled, reloading on each change; once they are watched
    /// (or cannot be: then `SIGHUP` reloads), the configuration counts as watched for `READY=1`.
    private static func watch(
        with watcher: FileWatcher, reloader: ConfigurationReloader, notifyReady: Bool, logger: Logger
    )
        async
    {
        do {
            try await watcher.run {
                await reloader.catchUp()
                if notifyReady { await reloader.configurationIsWatched() }
            } onModeChange: { mode in
                switch mode {
                case .inotify: await reloader.filesPolled(because: nil)
                case .polling(let reason): await reloader.filesPolled(because: reason)
                }
            } onChange: { batch in
                if batch.mountsChanged {
                    // No file event: systemd-confext merged, refreshed or unmerged /etc,
                    // or something else was mounted over the configuration.
                    logger.info(
                        "a mount over the configuration's directories changed; reloading",
                        metadata: ["paths": "\(batch)"])
                } else {
                    logger.debug("configuration files changed", metadata: ["paths": "\(batch)"])
                }
                await reloader.reload(trigger: .file)
            }
        } catch is CancellationError {
        } catch {
            logger.error("cannot watch the configuration files; reload with SIGHUP", metadata: ["error": "\(error)"])
            if notifyReady { await reloader.configurationIsWatched() }
        }
    }

    /// Reloads on each `SIGHUP` from readiness on (one that came while starting, at once).
    private static func follow(_ signals: ReloadSignals, reloader: ConfigurationReloader, notifyReady: Bool) async {
        if notifyReady { await reloader.waitUntilReady() }
        // Stopped before it was ready (the application never served).
        if Task.isCancelled { return }
        if ReloadSignals.signalsBeforeTrap > 0 {
            // A reload was asked for while we were starting: honour it now.
            await reloader.reload(trigger: .signal)
        }
        for await _ in signals.sequence {
            await reloader.reload(trigger: .signal)
        }
    }

    /// `EnvironmentService(<environment>)`, short enough for service-lifecycle's logs.
    public var description: String { "EnvironmentService(\(environment.environmentName))" }

    /// The control socket's server, bound now so that it answers once `READY=1` is out; `nil`
    /// when it is disabled or cannot be bound (which is logged: the daemon runs on without it).
    private func makeControlServer() -> ControlServer? {
        let socket = configuration.controlSocket
        guard socket.isEnabled else { return nil }
        let options = environment.options
        let applicationName = options?.applicationName ?? EnvironmentOptions.executableName
        let path: String
        do {
            guard
                let found = try socket.path
                    ?? ControlSocketPath.forDaemon(
                        applicationName: applicationName, instance: options?.selectedInstance,
                        processEnvironment: options?.processEnvironment ?? ProcessInfo.processInfo.environment)
            else {
                logger.warning(
                    "no runtime directory for the control socket; envctl and varlinkctl cannot reach this daemon",
                    metadata: ["hint": "\(ControlSocketPath.noRuntimeDirectoryHint)"])
                return nil
            }
            path = found
        } catch {
            // A name that would put the socket outside its runtime directory: no socket at all.
            logger.error(
                "cannot serve the control socket; envctl and varlinkctl cannot reach this daemon",
                metadata: ["error": "\(error)"])
            return nil
        }
        do {
            let server = try ControlServer(
                configuration: socket, path: path,
                handler: ControlHandler(environment: environment, reloader: reloader, applicationName: applicationName),
                logger: logger)
            logger.debug("control socket listening", metadata: ["path": "\(path)"])
            return server
        } catch {
            var metadata: Logger.Metadata = ["path": "\(path)", "error": "\(error)"]
            if ControlSocketPath.runtimeDirectory(
                in: options?.processEnvironment ?? ProcessInfo.processInfo.environment) == nil
            {
                metadata["hint"] = "\(ControlSocketPath.noRuntimeDirectoryHint)"
            }
            logger.error(
                "cannot serve the control socket; envctl and varlinkctl cannot reach this daemon", metadata: metadata)
            return nil
        }
    }

    private func makeWatcher() -> FileWatcher? {
        guard let location = environment.snapshot.location else { return nil }
        // The journal of a change that spans files too: its removal, once the change is
        // complete, is what the files' new state waits for (TransactionJournal).
        return FileWatcher(
            files: [location.mainFile, TransactionJournal.path(in: location.dropInDirectory)],
            directories: [location.dropInDirectory], debounce: configuration.debounce,
            entryFilter: ConfigurationLocation.isDropInFileName, logger: logger)
    }
}
