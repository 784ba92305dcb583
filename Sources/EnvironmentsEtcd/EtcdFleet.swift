#if Fleet
    import Dispatch
    public import Environments
    public import EnvironmentsDaemon
    public import EtcdFleetClient
    import Locking
    public import Logging
    public import ServiceLifecycle

    /// A fleet configuration in etcd, below the host's own files and live through a watch.
    ///
    /// ```swift
    /// let fleet = try await EtcdFleet.connect(configuration, logger: logger)
    /// fleet.apply(to: &options)
    /// let environment = try Environment.bootstrap(options)
    /// let service = EnvironmentService(environment: environment, reloadSignals: signals, logger: logger)
    /// let group = ServiceGroup(services: [service, await fleet.service(for: service)], logger: logger)
    /// ```
    ///
    /// - A change in etcd is applied through the same reload as a file change (journal entry,
    ///   `STATUS=`, observers, state file); one the application's validation rejects is rejected
    ///   on this host with the usual error, and the last good configuration stays.
    /// - Only the layout's keys are read and watched (`PREFIX/Environments.plist`,
    ///   `PREFIX/Environments.plist.d/NAME.plist`), within limits named when exceeded.
    /// - etcd's gRPC API, with one watch that asks for progress notifications: no reads while
    ///   nothing is published. When the member in use fails, stalls (silent for
    ///   `EtcdConfiguration.requestTimeout`, 5 s by default) or has no leader (looked at every 30 s
    ///   by default), the next endpoint takes over and the watch resumes from the last revision
    ///   applied, so no update is lost; a compacted revision leads to a full read.
    /// - The last good fleet configuration is cached on local disk. A daemon that starts while
    ///   etcd is unreachable starts from the cache, says so in the journal and in `STATUS=`, and
    ///   catches up when etcd returns; with no cache either, ``connect(_:logger:)`` fails.
    public final class EtcdFleet: Sendable {
        /// Where the fleet lives.
        package let configuration: EtcdConfiguration
        /// The fleet's documents, the layer ``apply(to:)`` puts below the host's files.
        package let layer: FleetLayer
        /// Whether the daemon starts from the local cache because etcd did not answer.
        public let startedFromCache: Bool

        /// The client the fleet reads and watches with (the tests ask which endpoint it uses).
        package let client: EtcdClient
        let cache: FleetCache?
        let logger: Logger
        /// Why etcd could not be read at start, when ``startedFromCache``.
        let startError: EtcdError?
        /// Cache writes happen here, off the tasks' threads, newest state only.
        private let cacheQueue = DispatchQueue(label: "EtcdFleet.cache")
        private let pendingCache = Locked<FleetState?>(nil)
        /// The application's version and the instance from the options the fleet was applied to.
        private let applied = Locked<(version: String?, instance: String?)>((nil, nil))

        /// Puts the fleet's documents below the host's own files in `options`: an environment made
        /// with them reads the fleet's `Environments.plist` and drop-ins first, then the host's
        /// `Environments.plist` and drop-ins, which override them setting by setting (as `/etc`
        /// overrides `/usr/lib` for systemd). With a fleet, the host's own files are optional.
        ///
        /// Every load and reload takes the documents as last read from etcd (or from the cache),
        /// at once: no load waits on the network. While a staged publish is in progress
        /// (`envctl publish --stage`), a host in its stage takes the publish's candidate instead:
        /// the host id (`EtcdConfiguration`'s, with the instance of `options`) says whether it is in.
        ///
        /// The application's version this host reports in its status key is the build's
        /// (`BuildInfo`'s, from the embedded Info.plist's `CFBundleShortVersionString`).
        public func apply(to options: inout EnvironmentOptions) {
            if !options.sources.contains(where: { ($0 as? FleetLayer) === layer }) { options.sources.append(layer) }
            let instance = options.selectedInstance
            layer.setHost(configuration.status.resolvedHostID(instance: instance))
            let version = options.build.version
            applied.withLock { $0 = (version, instance) }
        }

        private init(
            configuration: EtcdConfiguration, client: EtcdClient, state: FleetState, cache: FleetCache?,
            startError: EtcdError?, logger: Logger
        ) {
            self.configuration = configuration
            self.client = client
            self.layer = FleetLayer(state, limits: configuration.limits)
            self.cache = cache
            self.startedFromCache = startError != nil
            self.startError = startError
            self.logger = logger
        }

        deinit {
            // A fleet whose watch never ran (the environment built from it failed, and the daemon
            // exits) still holds its client's connections: close them. Closing twice is harmless.
            let client = client
            Task { await client.shutdown() }
        }

        /// Reads the fleet's documents: from etcd (the layout's keys only, at one revision), else
        /// from the local cache.
        ///
        /// Documents past a limit (how many, how large one, how large all together) are not an
        /// error here: the environment the fleet is applied to (``apply(to:)``) fails with the
        /// limit, the key and how to change it, as it fails with a malformed document.
        ///
        /// - Throws: `EtcdError` when etcd does not answer and there is no cache.
        public static func connect(_ configuration: EtcdConfiguration, logger: Logger) async throws(EtcdError)
            -> EtcdFleet
        {
            let client = try EtcdClient(configuration: configuration, logger: logger)
            let cache = configuration.cacheDirectory.map(FleetCache.init(directory:))
            do {
                let state = try await client.readFleet()
                logger.info(
                    "fleet configuration read from etcd",
                    metadata: [
                        "etcd_prefix": "\(configuration.prefix)", "etcd_revision": "\(state.revision)",
                        "etcd_endpoint": "\(client.currentEndpoint)", "documents": "\(state.entries.count)",
                    ])
                // The environment built from it fails with this reason, as with a malformed document.
                if let violation = state.violation {
                    logger.error("\(violation)", metadata: ["etcd_revision": "\(state.revision)"])
                }
                return EtcdFleet(
                    configuration: configuration, client: client, state: state, cache: cache, startError: nil,
                    logger: logger)
            } catch {
                let cached: FleetState?
                do {
                    cached = try cache?.load(prefix: configuration.prefix)
                } catch let cacheError {
                    await client.shutdown()
                    throw EtcdError(
                        operation: error.operation,
                        message: "\(error.message); and the cache cannot be used: \(cacheError)",
                        hint: error.hint)
                }
                guard let cached else {
                    await client.shutdown()
                    var failure = error
                    failure.message +=
                        cache.map { "; and there is no cached fleet configuration at \($0.path)" }
                        ?? "; and no cache is configured (CacheDirectory= or StateDirectory=)"
                    throw failure
                }
                logger.warning(
                    "etcd is unreachable; starting from the cached fleet configuration",
                    metadata: [
                        "error": "\(error)", "etcd_revision": "\(cached.revision)", "cache": "\(cache?.path ?? "")",
                    ])
                return EtcdFleet(
                    configuration: configuration, client: client, state: cached, cache: cache, startError: error,
                    logger: logger)
            }
        }

        /// Caches `state` soon, on a queue of its own: a write (and the disk it waits for) never
        /// holds up a reload, and of states that arrive faster than the disk takes them only the
        /// newest is written.
        func cacheLater(_ state: FleetState) {
            guard let cache else { return }
            let scheduled = pendingCache.withLock { pending -> Bool in
                defer { pending = state }
                return pending != nil
            }
            guard !scheduled else { return }
            cacheQueue.async { [self] in
                guard
                    let newest = pendingCache.withLock({ pending in
                        defer { pending = nil }; return pending
                    })
                else {
                    return
                }
                do {
                    try cache.store(newest)
                } catch {
                    logger.warning("cannot cache the fleet configuration", metadata: ["error": "\(error)"])
                }
            }
        }

        /// Waits until every cache write asked for so far is done.
        package func flushCache() {
            cacheQueue.sync {}
        }

        /// The service that keeps the fleet configuration live for `environmentService`: run it in
        /// the same `ServiceGroup`.
        ///
        /// The environment of `environmentService` was built from the documents read at
        /// ``connect(_:logger:)``, so they are good: they are cached now, and a daemon that runs for
        /// days against an unchanged fleet can still start from its cache during an outage.
        ///
        /// Unless `EtcdConfiguration.status` turns it off, the service also keeps this host's status
        /// key, `PREFIX/.status/HOST`, on a lease: the fleet revision it runs, the outcome of the last
        /// fleet change (with the rejection's error, secrets redacted), its versions and when it last
        /// renewed, for `envctl fleet status` (<doc:FleetStatus>).
        public func service(for environmentService: EnvironmentService) async -> some Service {
            if startedFromCache {
                await environmentService.setStatusNote(
                    "fleet configuration from the local cache at revision \(layer.revision) (etcd unreachable)",
                    from: layer)
            } else {
                cacheLater(layer.current)
            }
            var status: FleetStatusReporter?
            if configuration.status.isEnabled {
                var options = configuration.status
                let (version, instance) = applied.withLock { $0 }
                options.applicationVersion = options.applicationVersion ?? version
                let reporter = FleetStatusReporter(fleet: self, instance: instance, options: options)
                await environmentService.onReload { reporter.render($0) }
                status = reporter
            }
            return FleetWatch(fleet: self, service: environmentService, status: status)
        }
    }
#endif
