import ArgumentParser
import BenchmarkFixtures
import Dispatch
import Foundation
import Logging

/// ms from a publish in etcd (a transaction, as `envctl publish` writes it) until every one of
/// 20 environments in this process has applied the change, beside the floor: the same watch
/// delivered to a bare client that does nothing with it; and what etcd and this process use.
@main
struct FleetBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-benchmark",
        abstract:
            "Fleet mode: ms from an etcd transaction until N environments in one process applied it, beside a bare watch.",
        discussion: """
            Starts a local etcd cluster (/usr/bin/etcd) on free loopback ports in a temporary directory, \
            kills it at the end. Build with -c release. Progress goes to standard error; the results to \
            standard output. Exits 1 only if a change was not applied everywhere within 10 s (or a \
            transaction failed); missed targets are a result, not a failure.
            """)

    @Option(help: "Environments watching the fleet, each with its own EtcdFleet and EnvironmentService.")
    var watchers = 20

    @Option(help: "Changes measured (after 5 warm-up changes).")
    var changes = 100

    @Option(help: "Members of the local etcd cluster.")
    var members = 3

    @Flag(
        inversion: .prefixedNo,
        help: """
            Give each fleet a cache directory, as the fleet unit's CacheDirectory= does; \
            --no-fleet-cache shows what writing the cache on every change costs.
            """)
    var fleetCache = true

    @Flag(
        help: """
            Have each environment report its status under PREFIX/.status/ as a daemon does (a lease \
            renewed every 10 s, a put on each change and every 60 s), each with a host id of its own \
            (bench-N). Off by default, so that the figures compare with those measured before status \
            reporting existed.
            """)
    var status = false

    @Flag(
        inversion: .prefixedNo,
        help: """
            Have each service watch its (empty) host directory with inotify, as a daemon does. \
            Default: only up to 64 watchers, as inotify instances are limited per user \
            (fs.inotify.max_user_instances, 128 by default).
            """)
    var watchHostFiles: Bool?

    @Option(help: "Seconds to measure etcd's CPU with every environment watching and nothing published (0: none).")
    var idleSeconds = 0

    @Option(help: "An envctl executable: after the measured changes, publish with it too, one process a change.")
    var envctl: String?

    @Option(help: "Changes published with --envctl.")
    var envctlPublishes = 5

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    /// Changes written, and not counted, before each measurement.
    static let warmUpChanges = 5

    func validate() throws {
        guard watchers >= 1 else { throw ValidationError("--watchers must be at least 1") }
        guard changes >= 1 else { throw ValidationError("--changes must be at least 1") }
        guard members >= 1 else { throw ValidationError("--members must be at least 1") }
        guard idleSeconds >= 0 else { throw ValidationError("--idle-seconds must not be negative") }
        guard envctlPublishes >= 1 else { throw ValidationError("--envctl-publishes must be at least 1") }
        if let envctl, !FileManager.default.isExecutableFile(atPath: envctl) {
            throw ValidationError("--envctl: \(envctl) is not an executable")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        let logger = Logger(label: "fleet-benchmark")
        warnIfDebugBuild()
        guard FileManager.default.isExecutableFile(atPath: LocalEtcdCluster.binary) else {
            throw BenchmarkFailure("\(LocalEtcdCluster.binary) not found (apt-get install etcd-server)")
        }
        // Before the cluster starts, so that its members inherit it.
        let openFiles = raiseOpenFileLimit()
        if openFiles < UInt64(2 * watchers + 256) {
            progress("warning: open files are limited to \(openFiles); \(watchers) watchers need about \(2 * watchers)")
        }
        progress("starting a \(members)-member etcd cluster")
        let cluster = try await LocalEtcdCluster(size: members)
        let signals = Self.killClusterOnInterrupt(cluster)
        defer {
            signals.forEach { $0.cancel() }
            cluster.stop()
        }
        var report = try await measure(cluster, logger: logger)
        report.openFileLimit = openFiles
        print(json ? try report.json() : report.table())
        if !report.failures.isEmpty { throw ExitCode(1) }
    }

    private func measure(_ cluster: LocalEtcdCluster, logger: Logger) async throws -> Report {
        let endpoints = cluster.endpoints
        let prefix = "/fleet/fleet-benchmark/"
        let gateway = EtcdGateway(endpoint: endpoints[0])
        let writer = try await FleetWriter(gateway: gateway, prefix: prefix)
        let watchFiles = watchHostFiles ?? (watchers <= 64)
        // etcd's own idle CPU (raft heartbeats every 50 ms here), to subtract from the watchers'.
        var idleBaseline: UsageDelta?
        if idleSeconds > 0 {
            progress("\(idleSeconds) s with no watcher, for etcd's own idle CPU")
            let before = UsageSample(cluster)
            try await Task.sleep(for: .seconds(idleSeconds))
            idleBaseline = UsageDelta(from: before, to: UsageSample(cluster))
        }
        var counter = 0
        var failures: [String] = []

        /// What a phase measured besides the samples.
        struct PhaseResult {
            var samples: [Measurement.Sample]
            /// etcd's and this process's use over the measured changes.
            var usage: UsageDelta
            /// etcd's counters while everything watched.
            var metrics: EtcdMetrics?
            /// With nothing published for --idle-seconds, while everything watched.
            var idle: UsageDelta?
            /// Range calls etcd handled during the idle time.
            var idleRanges: Double?
            /// Puts, lease keepalives and revisions over the measured changes, and while idle.
            var operations: (puts: Double, leaseKeepAlives: Double, revisions: Double)?
            var idleOperations: (puts: Double, leaseKeepAlives: Double, revisions: Double)?
            var envctl: [EnvctlPublishes.Sample] = []
        }

        /// Starts `environments` environments and then `bareWatches` bare watches, writes the
        /// warm-up changes and then the measured ones (`extras`: then the envctl publishes and
        /// the idle time), and stops them all.
        func phase(_ name: String, environments: Int, bareWatches: Int, extras: Bool = false) async throws
            -> PhaseResult
        {
            progress("\(name): \(Self.warmUpChanges) warm-up changes, then \(changes)")
            let arrivals = Arrivals(environments: environments, bareWatches: bareWatches)
            let watching =
                environments == 0
                ? nil
                : try await WatchingEnvironments.start(
                    count: environments, endpoints: endpoints, prefix: prefix, root: cluster.root,
                    fleetCache: fleetCache, status: status, watchFiles: watchFiles, arrivals: arrivals,
                    logger: logger,
                    progress: progress)
            let revision = try await gateway.modRevision(of: writer.key).store
            var watches: [BareWatch] = []
            for index in 0..<bareWatches {
                watches.append(
                    try await BareWatch.start(
                        // All on the first member, whereas the environments' clients each
                        // start on the member their machine id picks.
                        index, endpoint: endpoints[0], prefix: prefix, after: revision, arrivals: arrivals))
            }
            let measurement = Measurement(writer: writer, arrivals: arrivals)
            failures += await measurement.run((counter + 1)...(counter + Self.warmUpChanges)).failures
            counter += Self.warmUpChanges
            let metricsBefore = EtcdMetrics.read(cluster)
            let before = UsageSample(cluster)
            let measured = await measurement.run((counter + 1)...(counter + changes))
            let usage = UsageDelta(from: before, to: UsageSample(cluster))
            counter += changes
            failures += measured.failures
            var result = PhaseResult(samples: measured.samples, usage: usage, metrics: EtcdMetrics.read(cluster))
            if let metricsBefore, let metricsAfter = result.metrics {
                result.operations = metricsBefore.operations(until: metricsAfter)
            }
            if extras, let envctl {
                progress("\(envctlPublishes) changes published by envctl processes")
                let published = await EnvctlPublishes(
                    envctl: envctl, endpoints: endpoints, prefix: prefix, arrivals: arrivals, directory: cluster.root
                ).run((counter + 1)...(counter + envctlPublishes))
                counter += envctlPublishes
                failures += published.failures
                result.envctl = published.samples
                try await writer.refresh()
            }
            if extras, idleSeconds > 0 {
                progress("\(idleSeconds) s with nothing published")
                // Past the first keepalive probes after the last change.
                try await Task.sleep(for: .seconds(3))
                let metricsBefore = EtcdMetrics.read(cluster)
                let before = UsageSample(cluster)
                try await Task.sleep(for: .seconds(idleSeconds))
                result.idle = UsageDelta(from: before, to: UsageSample(cluster))
                if let metricsBefore, let after = EtcdMetrics.read(cluster) {
                    result.idleRanges = after.ranges.reduce(0, +) - metricsBefore.ranges.reduce(0, +)
                    result.idleOperations = metricsBefore.operations(until: after)
                }
            }
            for watch in watches { await watch.stop() }
            await watching?.stop()
            return result
        }

        // What the machine delivers at best: one watch, nothing else running.
        let alone = try await phase("one bare watch alone", environments: 0, bareWatches: 1)
        // What etcd's fan-out to as many watches as environments costs, with nobody applying.
        let bare = try await phase("\(watchers) bare watches", environments: 0, bareWatches: watchers)
        // The measurement: the environments, and the floor beside them on the same changes.
        let measured = try await phase(
            "\(watchers) environments and a bare watch", environments: watchers, bareWatches: 1, extras: true)

        for failure in failures { progress("failure: \(failure)") }
        return Report(
            watchers: watchers, changes: changes, members: members, fleetCache: fleetCache,
            watchHostFiles: watchFiles,
            slowest: Statistics(measured.samples.map { $0.applied.max()! }),
            fastest: Statistics(measured.samples.map { $0.applied.min()! }),
            median: Statistics(measured.samples.map { Statistics($0.applied).median }),
            floor: Statistics(measured.samples.map { $0.delivered[0] }),
            floorAlone: Statistics(alone.samples.map { $0.delivered[0] }),
            bareSlowest: Statistics(bare.samples.map { $0.delivered.max()! }),
            usage: measured.usage, bareUsage: bare.usage, metrics: measured.metrics, bareMetrics: bare.metrics,
            idle: measured.idle, idleBaseline: idleBaseline, idleRanges: measured.idleRanges,
            operations: measured.operations, idleOperations: measured.idleOperations, status: status,
            envctlApplied: Statistics(measured.envctl.map(\.applied)),
            envctlExited: Statistics(measured.envctl.map(\.exited)),
            failures: failures)
    }

    /// Kills the cluster and exits on SIGINT or SIGTERM, so that an interrupted run leaves no
    /// etcd behind.
    private static func killClusterOnInterrupt(_ cluster: LocalEtcdCluster) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                cluster.stop()
                Foundation.exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
