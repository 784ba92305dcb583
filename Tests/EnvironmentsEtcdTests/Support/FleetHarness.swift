#if Fleet
    import Environments
    import EnvironmentsControl
    import EnvironmentsDaemon
    import EnvironmentsEtcd
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import Logging
    import ServiceLifecycle
    import Testing
    import SystemdSupport

    /// A daemon's configuration core in this process: an ``EtcdFleet`` on a prefix of its own, an
    /// ``Environment`` with the fleet below a host directory, and the ``EnvironmentService`` and
    /// fleet watch running in a `ServiceGroup`, as in the example daemon.
    final class FleetHarness: @unchecked Sendable {
        let cluster: EtcdCluster
        let prefix: String
        let hostDirectory: URL
        let cacheDirectory: URL
        let writer: EtcdClient
        private(set) var environment: Environment?
        private(set) var service: EnvironmentService?
        private(set) var fleet: EtcdFleet?
        private var running: Task<Void, any Error>?
        private var group: ServiceGroup?

        init(cluster: EtcdCluster, prefix: String? = nil) throws {
            self.cluster = cluster
            self.prefix = prefix ?? "/fleet/test-\(UUID().uuidString.prefix(8))/"
            hostDirectory = cluster.root.appendingPathComponent("host-\(UUID().uuidString.prefix(8))")
            cacheDirectory = hostDirectory.appendingPathComponent("cache")
            try FileManager.default.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
            writer = try cluster.client()
        }

        /// Runs `body` with a harness on a new cluster of `size` members, with `common` published as
        /// the fleet's main document first (unless `nil`); then stops the harness and the cluster,
        /// whatever `body` did. `body` starts the harness, as each test needs it.
        static func withFleet<Result>(
            size: Int = 3, publishing common: [String: String]? = nil, _ body: (FleetHarness) async throws -> Result
        ) async throws -> Result {
            let cluster = try await EtcdCluster(size: size)
            defer { cluster.stop() }
            return try await withFleet(on: cluster, publishing: common, body)
        }

        /// Runs `body` with a harness on `cluster` (a prefix of its own), with `common` published as
        /// the fleet's main document first (unless `nil`); then stops the harness, whatever `body` did.
        static func withFleet<Result>(
            on cluster: EtcdCluster, publishing common: [String: String]? = nil,
            _ body: (FleetHarness) async throws -> Result
        ) async throws -> Result {
            let fleet = try FleetHarness(cluster: cluster)
            do {
                if let common { try await fleet.publish(common: common) }
                let result = try await body(fleet)
                await fleet.stop()
                return result
            } catch {
                await fleet.stop()
                throw error
            }
        }

        /// envctl's options for this fleet: the cluster's endpoints and the prefix.
        var envctlOptions: [String] {
            ["--etcd-endpoints", cluster.endpoints.joined(separator: ","), "--etcd-prefix", prefix]
        }

        /// A new directory `name` in the cluster's temporary directory (removed with it).
        func makeDirectory(_ name: String) throws -> URL {
            let directory = cluster.root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }

        /// An `Environments.plist` with `common` and a `Production` section.
        static func document(common: [String: String] = [:], production: [String: String] = [:]) -> Data {
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

        /// Writes the fleet's main document (through `client`, or the harness's own writer).
        @discardableResult
        func publish(
            common: [String: String] = [:], production: [String: String] = [:], through client: EtcdClient? = nil
        ) async throws -> Int64 {
            try await (client ?? writer).put(
                prefix + "Environments.plist", Self.document(common: common, production: production))
        }

        /// The member whose endpoint the fleet's client uses now, its index in the cluster, and a
        /// client on the other members: writes through it keep coming while that member is down.
        /// The caller shuts the client down.
        func memberInUse() throws -> (endpoint: String, index: Int, others: EtcdClient) {
            let inUse = try #require(fleet?.client.currentEndpoint)
            let index = try #require(cluster.members.firstIndex { $0.endpoint == inUse })
            return (inUse, index, try cluster.client(endpoints: cluster.endpoints.filter { $0 != inUse }))
        }

        /// Connects to etcd (or the cache) and runs the service and the fleet watch.
        ///
        /// - Parameter validate: The application's check: here, `Limit` must be a number up to 100.
        /// - Parameters:
        ///   - endpoints: The endpoints (default: every member's).
        ///   - limits: The limits on the fleet's documents.
        ///   - requestTimeout: How long one request may take, and a watch may hear nothing.
        ///   - configure: Changes the configuration: TLS files, a user.
        ///   - maximumLimit: The largest `Limit` this host's validation accepts.
        ///   - version: The application's version, as its build gives it.
        func start(
            endpoints: [String]? = nil, limits: FleetLimits = FleetLimits(), requestTimeout: Duration = .seconds(2),
            maximumLimit: Int = 100, version: String? = nil, configure: (inout EtcdConfiguration) -> Void = { _ in }
        ) async throws {
            var configuration = EtcdConfiguration(
                endpoints: endpoints ?? cluster.endpoints, prefix: prefix, cacheDirectory: cacheDirectory.path,
                requestTimeout: requestTimeout)
            configuration.limits = limits
            configure(&configuration)
            let logger = Logger(label: "fleet-tests")
            let fleet = try await EtcdFleet.connect(configuration, logger: logger)
            do {
                try await run(fleet, logger: logger, maximumLimit: maximumLimit, version: version)
            } catch {
                // As a daemon that cannot start exits: nothing runs the watch, which would close it.
                await fleet.client.shutdown()
                throw error
            }
        }

        private func run(_ fleet: EtcdFleet, logger: Logger, maximumLimit: Int, version: String?) async throws {
            var options = EnvironmentOptions(
                applicationName: "fleet-tests", configDirectory: hostDirectory.path,
                build: BuildInfo(defaultEnvironment: "Production", version: version), processEnvironment: [:])
            fleet.apply(to: &options)
            // `Token` is secret; a validation that quotes it (as careless ones do) is redacted by
            // the library. `Reason` makes a rejection with a long text.
            options.secretKeys = ["Token"]
            options.validate = { snapshot in
                if let limit = (try? snapshot.require("Limit", as: String.self)), (Int(limit) ?? 1000) > maximumLimit {
                    throw EnvironmentError(
                        .validationFailed, "Limit must be a number up to \(maximumLimit)", key: "Limit")
                }
                if let token = try? snapshot.require("Token", as: String.self), !token.hasPrefix("ok-") {
                    throw EnvironmentError(.validationFailed, "Token \(token) does not start with ok-", key: "Token")
                }
                if let reason = try? snapshot.require("Reason", as: String.self) {
                    throw EnvironmentError(.validationFailed, String(repeating: reason, count: 200), key: "Reason")
                }
            }
            let environment = try Environment(options: options)
            var serviceConfiguration = EnvironmentService.Configuration()
            serviceConfiguration.systemdNotifications = false
            serviceConfiguration.watchdog = false
            serviceConfiguration.stateFile = nil
            serviceConfiguration.levelControl = nil
            serviceConfiguration.controlSocket = .disabled
            serviceConfiguration.journalOutput = .stderrPlain
            let service = EnvironmentService(
                environment: environment, reloadSignals: nil, configuration: serviceConfiguration, logger: logger)
            let watch = await fleet.service(for: service)
            let group = ServiceGroup(services: [service, watch], logger: logger)
            self.fleet = fleet
            self.environment = environment
            self.service = service
            self.group = group
            running = Task { try await group.run() }
            await service.waitUntilReady()
        }

        /// Stops the fleet watch and the service as a killed daemon stops: no graceful shutdown
        /// (the status key's lease is left to expire).
        func abandon() async {
            running?.cancel()
            _ = try? await running?.value
            running = nil
            group = nil
        }

        /// Stops the service group.
        func stop() async {
            await group?.triggerGracefulShutdown()
            _ = try? await running?.value
            fleet?.flushCache()
            running = nil
            group = nil
        }

        /// Waits until `key` reads `expected`.
        func waitFor(_ key: String, _ expected: String, timeout: Duration = .seconds(20)) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if (try? environment?.require(key, as: String.self)) == expected { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return false
        }

        /// The last reload's outcome once it is `outcome` (within `timeout`): the verdict is
        /// recorded just after the new values are published, so a reader may see them first.
        func waitForOutcome(
            _ outcome: String, timeout: Duration = .seconds(10)
        ) async throws -> (outcome: String, error: String?)? {
            try await waitForReload(timeout: timeout) { $0.outcome == outcome }
        }

        /// The last reload's outcome and error once they satisfy `condition`, else after `timeout`
        /// as they are then.
        func waitForReload(
            timeout: Duration = .seconds(10), where condition: ((outcome: String, error: String?)) -> Bool
        ) async throws -> (outcome: String, error: String?)? {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let reload = await lastReload, condition(reload) { return reload }
                try await Task.sleep(for: .milliseconds(10))
            }
            return await lastReload
        }

        /// The last reload's outcome and error, as the daemon's state file would say.
        var lastReload: (outcome: String, error: String?)? {
            get async {
                guard let record = await service?.reloader.lastReloadReport else { return nil }
                return (record.verdict.wireName, record.verdictError?.description)
            }
        }

        deinit {
            running?.cancel()
            let writer = writer
            Task { await writer.shutdown() }
        }
    }
#endif
