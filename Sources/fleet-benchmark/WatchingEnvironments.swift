#if Fleet
    import Environments
    import EnvironmentsDaemon
    import SystemdSupport
    import EnvironmentsEtcd
    import EtcdFleetClient
    import Foundation
    import Logging
    import ServiceLifecycle

    /// `count` daemons' configuration cores in this process, as the example daemon sets one up:
    /// each its own ``EtcdFleet`` (its own client and watch) on the same prefix, its own
    /// ``Environment`` with the fleet below an empty host directory, and its own
    /// ``EnvironmentService``; all services and fleet watches in one `ServiceGroup`.
    final class WatchingEnvironments: Sendable {
        let environments: [Environment]
        /// The environments' observations, which record arrivals while they are kept.
        private let observations: [ObserverToken]
        private let group: ServiceGroup
        private let running: Task<Void, any Error>

        private init(
            environments: [Environment], observations: [ObserverToken], group: ServiceGroup,
            running: Task<Void, any Error>
        ) {
            self.environments = environments
            self.observations = observations
            self.group = group
            self.running = running
        }

        /// Connects `count` fleets, fleet `index` to `endpoints(index)`, starts their services and
        /// returns once every one is ready. Each environment's `onChange` records in `arrivals` the
        /// `Counter` it applied. With
        /// `fleetCache`, each fleet caches its documents in a directory of its own. With
        /// `watchFiles`, each service watches its (empty) host directory with inotify, as a daemon
        /// does; inotify instances are limited per user (`fs.inotify.max_user_instances`, 128 by
        /// default), so hundreds of services in one process go without (one per host does not).
        static func start(
            count: Int, endpoints: (Int) -> [String], prefix: String, requestTimeout: Duration, root: URL,
            fleetCache: Bool,
            status: Bool,
            watchFiles: Bool, arrivals: Arrivals, logger: Logger, progress: (String) -> Void
        ) async throws -> WatchingEnvironments {
            var environments: [Environment] = []
            var observations: [ObserverToken] = []
            var services: [any Service] = []
            var environmentServices: [EnvironmentService] = []
            for index in 0..<count {
                let host = root.appendingPathComponent("host-\(index)")
                // A cache of its own for each: the cache's temporary file is named by process id.
                let cache = host.appendingPathComponent("cache")
                try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
                // As a daemon's unit would set it: the cache directory, the host id, status on or off.
                var variables = [
                    "ENVIRONMENTS_ETCD_STATUS": status ? "on" : "off", "ENVIRONMENTS_ETCD_HOST_ID": "bench-\(index)",
                ]
                if fleetCache { variables["CACHE_DIRECTORY"] = cache.path }
                guard
                    var etcd = try EtcdConfiguration.resolve(
                        endpoints: endpoints(index).joined(separator: ","), prefix: prefix,
                        processEnvironment: variables)
                else { throw BenchmarkFailure("no etcd endpoints") }
                etcd.requestTimeout = requestTimeout
                let fleet = try await EtcdFleet.connect(etcd, logger: logger)
                var options = EnvironmentOptions(
                    applicationName: "fleet-benchmark", configDirectory: host.path,
                    build: BuildInfo(defaultEnvironment: "Production"))
                fleet.apply(to: &options)
                let environment = try Environment(options: options)
                let observation = environment.onChange { change in
                    let now = ContinuousClock.now
                    guard
                        let counter = (try? change.current.require(FleetDocument.counterKey, as: String.self)).flatMap({
                            Int($0)
                        })
                    else {
                        return
                    }
                    arrivals.applied(counter: counter, at: now)
                }
                var configuration = EnvironmentService.Configuration()
                configuration.systemdNotifications = false
                configuration.stateFile = nil
                configuration.controlSocket = .disabled
                configuration.journalOutput = .stderrPlain
                configuration.watchFiles = watchFiles
                let service = EnvironmentService(
                    environment: environment, reloadSignals: nil, configuration: configuration, logger: logger)
                services.append(service)
                services.append(await fleet.service(for: service))
                environments.append(environment)
                observations.append(observation)
                environmentServices.append(service)
                if (index + 1) % 100 == 0 && index + 1 < count { progress("\(index + 1) of \(count) fleets connected") }
            }
            let group = ServiceGroup(services: services, logger: logger)
            let running = Task { try await group.run() }
            for service in environmentServices { await service.waitUntilReady() }
            return WatchingEnvironments(
                environments: environments, observations: observations, group: group, running: running)
        }

        /// Shuts the group down gracefully and waits for it.
        func stop() async {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
        }
    }

    /// The fleet's main document: `Common` and a `Production` section, with the change's number.
    enum FleetDocument {
        /// The key whose value is the change's number.
        static let counterKey = "Counter"

        /// An `Environments.plist` whose `Production` section sets ``counterKey`` to `counter`,
        /// beside a few fixed settings, as a small service's fleet file might hold.
        static func data(counter: Int) -> Data {
            let common = [
                "ServiceName": "fleet-benchmark", "LogLevel": "info", "RequestTimeout": "5s",
                "MaxConnections": "64", "APIBaseUrl": "https://api.example.com/v1",
            ]
            let production = [
                counterKey: String(counter), "APIBaseUrl": "https://api.example.net/v1", "MaxConnections": "256",
                "FeatureFlags": "search,export",
            ]
            func dictionary(_ values: [String: String]) -> String {
                values.keys.sorted().map { "<key>\($0)</key><string>\(values[$0]!)</string>" }.joined()
            }
            return Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0"><dict>
                <key>Common</key><dict>\(dictionary(common))</dict>
                <key>Production</key><dict>\(dictionary(production))</dict>
                </dict></plist>
                """.utf8)
        }
    }
#endif
