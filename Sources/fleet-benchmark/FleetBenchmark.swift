#if Fleet
    import ArgumentParser
    import Dispatch
    import Foundation
    import Logging
    import Locking

    /// Thousands of simulated hosts watching one fleet on a local 3-member etcd, each with a
    /// connection of its own: this client's watches (a sample of them whole `EnvironmentService`s)
    /// beside bare gRPC watches as etcdctl makes them, directly and through `etcd grpc-proxy`; what
    /// a publish costs them and the members, what the watches cost idle, and the issue's goals.
    @main
    struct FleetBenchmark: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fleet-benchmark",
            abstract:
                "Fleet mode at scale: N hosts' watches (this client's, and bare gRPC ones) on a local etcd, directly and through grpc-proxy.",
            discussion: """
                Starts a local etcd cluster (/usr/bin/etcd) and its proxies on free loopback ports in a \
                temporary directory, kills them at the end. Build with -c release. Raises the open-file \
                limit to 2 x hosts + 1024 (at least 65,536) when it may (root), else to the hard limit: \
                run `ulimit -n 65536` first otherwise. Progress goes to standard error; the results to \
                standard output. Exits 1 only if a change did not reach every host within 30 s (or a \
                transaction failed); a missed goal is a result, not a failure.
                """)

        @Option(help: "Simulated hosts in each phase, each with its own connection and watch.")
        var hosts = 200

        @Option(help: "Of this client's hosts, how many are whole EnvironmentServices applying the change.")
        var services = 20

        @Option(help: "Changes measured in each phase (after 3 warm-up changes).")
        var changes = 10

        @Option(help: "Members of the local etcd cluster.")
        var members = 3

        @Option(help: "grpc-proxy processes for the proxied phases (0: none), each in front of one member.")
        var proxies = 1

        @Option(help: "Seconds of nothing published in each phase, for the idle CPU and calls.")
        var idleSeconds = 5

        @Option(
            help:
                "The members' --experimental-watch-progress-notify-interval, in seconds (below half of --request-timeout)."
        )
        var progressNotifyInterval = 2.0

        @Option(
            help:
                "The hosts' EtcdConfiguration.requestTimeout in seconds: a watch silent for half of it asks for a progress notification, for all of it leaves its member."
        )
        var requestTimeout = 5.0

        /// Changes written, and not counted, before each measurement.
        static let warmUpChanges = 3

        func validate() throws {
            guard hosts >= 1 else { throw ValidationError("--hosts must be at least 1") }
            guard services >= 0 else { throw ValidationError("--services must not be negative") }
            guard changes >= 1 else { throw ValidationError("--changes must be at least 1") }
            guard members >= 1 else { throw ValidationError("--members must be at least 1") }
            guard proxies >= 0 else { throw ValidationError("--proxies must not be negative") }
            guard idleSeconds >= 1 else { throw ValidationError("--idle-seconds must be at least 1") }
            guard requestTimeout >= 1 else { throw ValidationError("--request-timeout must be at least 1") }
            guard progressNotifyInterval > 0 else {
                throw ValidationError("--progress-notify-interval must be positive")
            }
        }

        func run() async throws {
            LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
            let logger = Logger(label: "fleet-benchmark")
            warnIfDebugBuild()
            guard FileManager.default.isExecutableFile(atPath: LocalEtcdCluster.binary) else {
                throw BenchmarkFailure("\(LocalEtcdCluster.binary) not found (apt-get install etcd-server)")
            }
            // Before the cluster starts, so that its members and proxies inherit it.
            let openFiles = raiseOpenFileLimit(to: UInt64(max(65536, 2 * hosts + 1024)))
            if openFiles < UInt64(hosts + 256) {
                progress("warning: open files are limited to \(openFiles); \(hosts) hosts need about \(hosts + 256)")
            }
            let clusters = Clusters()
            let signals = Self.killClustersOnInterrupt(clusters)
            defer {
                signals.forEach { $0.cancel() }
                clusters.stopAll()
            }
            var report = try await measure(clusters, logger: logger)
            report.openFileLimit = openFiles
            print(report.text())
            if !report.failures.isEmpty { throw ExitCode(1) }
        }

        private func measure(_ clusters: Clusters, logger: Logger) async throws -> Report {
            let prefix = "/fleet/fleet-benchmark/"
            var counter = 0
            var failures: [String] = []
            let services = min(self.services, hosts)

            /// Runs one phase on a cluster of its own, started for it (and its proxies, if `proxied`),
            /// so that each phase's memory grows from the same start: `hosts` watches of `kind` (0:
            /// none) on `endpoints(index)` (of the members' endpoints and the proxies'), the first
            /// `services` of them whole environments; the warm-up and measured changes; the idle time.
            func phase(
                _ name: String, _ kind: Watches.Kind?, services: Int = 0, proxied: Bool,
                endpoints hostEndpoints:
                    @escaping @Sendable (_ index: Int, _ members: [String], _ proxies: [String]) -> [String]
            ) async throws -> Report.Phase {
                let count = kind == nil ? 0 : hosts
                progress("\(name): a \(members)-member etcd cluster\(proxied ? " and \(proxies) grpc-proxy" : "")")
                let cluster = try await LocalEtcdCluster(
                    size: members, progressNotifyMilliseconds: Int(progressNotifyInterval * 1000))
                clusters.add(cluster)
                defer { clusters.stop(cluster) }
                let writer = try await FleetWriter(endpoints: cluster.endpoints, prefix: prefix, logger: logger)
                var proxiesHere: [LocalEtcdCluster.Proxy] = []
                if proxied {
                    for index in 0..<proxies {
                        proxiesHere.append(try await cluster.startProxy(member: index % members))
                    }
                }
                let memberEndpoints = cluster.endpoints
                let proxyEndpoints = proxiesHere.map(\.endpoint)
                let hostEndpoints: @Sendable (Int) -> [String] = { hostEndpoints($0, memberEndpoints, proxyEndpoints) }
                progress("\(name): \(count) hosts")
                let arrivals = Arrivals(watches: count - services, environments: services)
                // Settled after the start.
                try await Task.sleep(for: .seconds(2))
                let empty = UsageSample(cluster, proxies: proxiesHere)
                let revision = try await writer.storeRevision()
                let environments =
                    services == 0
                    ? nil
                    : try await WatchingEnvironments.start(
                        count: services, endpoints: hostEndpoints, prefix: prefix,
                        requestTimeout: .seconds(requestTimeout),
                        root: cluster.root, fleetCache: true,
                        status: false, watchFiles: false, arrivals: arrivals, logger: logger, progress: progress)
                var watches: Watches?
                if let kind {
                    watches = try await Watches.start(
                        kind, count: count - services, first: services, endpoints: hostEndpoints, prefix: prefix,
                        from: revision + 1, requestTimeout: .seconds(requestTimeout), arrivals: arrivals, logger: logger
                    )
                }
                let measurement = Measurement(writer: writer, arrivals: arrivals)
                failures += await measurement.run((counter + 1)...(counter + Self.warmUpChanges)).failures
                counter += Self.warmUpChanges
                progress("\(name): \(changes) changes")
                let before = UsageSample(cluster, proxies: proxiesHere)
                let measured = await measurement.run((counter + 1)...(counter + changes))
                let after = UsageSample(cluster, proxies: proxiesHere)
                counter += changes
                failures += measured.failures.map { "\(name): \($0)" }
                progress("\(name): \(idleSeconds) s idle")
                // Past the progress requests that follow the last change.
                try await Task.sleep(for: .seconds(3))
                let metricsBefore = EtcdMetrics.read(cluster)
                let idleBefore = UsageSample(cluster, proxies: proxiesHere)
                try await Task.sleep(for: .seconds(idleSeconds))
                let idleAfter = UsageSample(cluster, proxies: proxiesHere)
                let metricsAfter = EtcdMetrics.read(cluster)
                await watches?.stop()
                await environments?.stop()
                await writer.shutdown()
                var result = Report.Phase(
                    name: name, hosts: count, services: services,
                    lastArrival: Statistics(measured.lastArrival),
                    changes: UsageDelta(from: before, to: after), idle: UsageDelta(from: idleBefore, to: idleAfter),
                    empty: empty, full: idleAfter)
                if let metricsBefore, let metricsAfter {
                    result.idleRanges = metricsAfter.ranges.reduce(0, +) - metricsBefore.ranges.reduce(0, +)
                    result.idleStatuses = metricsAfter.statuses.reduce(0, +) - metricsBefore.statuses.reduce(0, +)
                    result.watchers = metricsAfter.watchers
                }
                return result
            }

            let none = try await phase("no watch", nil, proxied: false) { _, _, _ in [] }
            let client = try await phase("this client, direct", .client, services: services, proxied: false) {
                _, members, _ in members
            }
            // The bare watches on the member this client's watches used (the one this machine's id
            // picks: every simulated host here has the same).
            let used =
                client.full.connections.indices.max { client.full.connections[$0] < client.full.connections[$1] } ?? 0
            let bare = try await phase("bare gRPC watches, direct", .bare, proxied: false) { _, members, _ in
                [members[used]]
            }
            var phases = [none, client, bare]
            if proxies > 0 {
                // Host i lists the proxies from number i on, as if hosts' machine ids spread them.
                phases.append(
                    try await phase(
                        "this client, through \(proxies) grpc-proxy", .client, services: services, proxied: true
                    ) {
                        index, _, proxies in (0..<proxies.count).map { proxies[(index + $0) % proxies.count] }
                    })
                phases.append(
                    try await phase("bare gRPC watches, through \(proxies) grpc-proxy", .bare, proxied: true) {
                        index, _, proxies in [proxies[index % proxies.count]]
                    })
            }

            // The status reports' writes: one put per host of a daemon's size, as each host writes
            // after a change and every 60 s.
            progress("\(hosts) status puts")
            let cluster = try await LocalEtcdCluster(
                size: members, progressNotifyMilliseconds: Int(progressNotifyInterval * 1000))
            clusters.add(cluster)
            let writer = try await FleetWriter(endpoints: cluster.endpoints, prefix: prefix, logger: logger)
            let statusBefore = UsageSample(cluster)
            try await writer.writeStatus(count: hosts, prefix: prefix, concurrency: 64)
            let statusPuts = UsageDelta(from: statusBefore, to: UsageSample(cluster))
            await writer.shutdown()
            clusters.stop(cluster)

            for failure in failures { progress("failure: \(failure)") }
            return Report(
                hosts: hosts, services: services, changes: changes, members: members, proxies: proxies,
                idleSeconds: idleSeconds, progressNotifyInterval: progressNotifyInterval,
                requestTimeout: requestTimeout,
                usedMember: used,
                phases: phases, statusPuts: statusPuts, failures: failures)
        }

        /// Kills the clusters and exits on SIGINT or SIGTERM, so that an interrupted run leaves no
        /// etcd behind.
        private static func killClustersOnInterrupt(_ clusters: Clusters) -> [any DispatchSourceSignal] {
            [SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    clusters.stopAll()
                    Foundation.exit(128 + number)
                }
                source.resume()
                return source
            }
        }
    }

    /// The clusters running, for the signal handler.
    final class Clusters: Sendable {
        private let running = Locked<[LocalEtcdCluster]>([])

        func add(_ cluster: LocalEtcdCluster) {
            running.withLock { $0.append(cluster) }
        }

        /// Stops `cluster` (its members and proxies) and removes its directory.
        func stop(_ cluster: LocalEtcdCluster) {
            running.withLock { $0.removeAll { $0 === cluster } }
            cluster.stop()
        }

        func stopAll() {
            for cluster in running.withLock({ $0 }) { cluster.stop() }
        }
    }
#endif
