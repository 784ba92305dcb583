import ArgumentParser
import Dispatch
import EtcdFleetClient
import EtcdTestSupport
import Foundation
import Logging

/// ms from a `put` in etcd until every one of 20 environments in this process has applied the
/// change, beside the floor: the same watch delivered to a bare client that does nothing with it.
@main
struct FleetBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-benchmark",
        abstract:
            "Fleet mode: ms from an etcd put until N environments in one process applied it, beside a bare watch.",
        discussion: """
            Starts a local etcd cluster (/usr/bin/etcd) on free loopback ports in a temporary directory, \
            kills it at the end. Build with -c release. Progress goes to standard error; the results to \
            standard output. Exits 1 only if a change was not applied everywhere within 10 s (or a put \
            failed); missed targets are a result, not a failure.
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

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    /// Changes written, and not counted, before each measurement.
    static let warmUpChanges = 5

    func validate() throws {
        guard watchers >= 1 else { throw ValidationError("--watchers must be at least 1") }
        guard changes >= 1 else { throw ValidationError("--changes must be at least 1") }
        guard members >= 1 else { throw ValidationError("--members must be at least 1") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        let logger = Logger(label: "fleet-benchmark")
        #if DEBUG
            progress("warning: a debug build; numbers mean little (use swift run -c release)")
        #endif
        guard FileManager.default.isExecutableFile(atPath: EtcdCluster.binary) else {
            throw BenchmarkFailure("\(EtcdCluster.binary) not found (apt-get install etcd-server)")
        }
        progress("starting a \(members)-member etcd cluster")
        let cluster = try await EtcdCluster(size: members)
        let signals = Self.killClusterOnInterrupt(cluster)
        defer {
            signals.forEach { $0.cancel() }
            cluster.stop()
        }
        let report = try await measure(cluster, logger: logger)
        print(json ? try report.json() : report.table())
        if !report.failures.isEmpty { throw ExitCode(1) }
    }

    private func measure(_ cluster: EtcdCluster, logger: Logger) async throws -> Report {
        let endpoints = cluster.endpoints
        let prefix = "/fleet/fleet-benchmark/"
        let writer = try EtcdClient(configuration: EtcdConfiguration(endpoints: endpoints, prefix: "/"), logger: logger)
        defer { Task { await writer.shutdown() } }
        let key = FleetState.mainKey(prefix: prefix)
        try await writer.put(key, FleetDocument.data(counter: 0))
        var counter = 0
        var failures: [String] = []

        /// Starts `environments` environments and then `bareWatches` bare watches, writes the
        /// warm-up changes and then the measured ones, and stops them all.
        func phase(_ name: String, environments: Int, bareWatches: Int) async throws -> [Measurement.Sample] {
            progress("\(name): \(Self.warmUpChanges) warm-up changes, then \(changes)")
            let arrivals = Arrivals(environments: environments, bareWatches: bareWatches)
            let watching =
                environments == 0
                ? nil
                : try await WatchingEnvironments.start(
                    count: environments, endpoints: endpoints, prefix: prefix, root: cluster.root,
                    fleetCache: fleetCache, arrivals: arrivals, logger: logger)
            let revision = try await writer.range(prefix: prefix).revision
            var watches: [BareWatch] = []
            for index in 0..<bareWatches {
                watches.append(
                    try await BareWatch.start(
                        index, endpoints: endpoints, prefix: prefix, after: revision, arrivals: arrivals,
                        logger: logger))
            }
            let measurement = Measurement(writer: writer, key: key, arrivals: arrivals)
            failures += await measurement.run((counter + 1)...(counter + Self.warmUpChanges)).failures
            counter += Self.warmUpChanges
            let measured = await measurement.run((counter + 1)...(counter + changes))
            counter += changes
            failures += measured.failures
            for watch in watches { await watch.stop() }
            await watching?.stop()
            return measured.samples
        }

        // What the machine delivers at best: one watch, nothing else running.
        let alone = try await phase("one bare watch alone", environments: 0, bareWatches: 1)
        // What etcd's fan-out to as many watches as environments costs, with nobody applying.
        let bare = try await phase("\(watchers) bare watches", environments: 0, bareWatches: watchers)
        // The measurement: the environments, and the floor beside them on the same changes.
        let measured = try await phase(
            "\(watchers) environments and a bare watch", environments: watchers, bareWatches: 1)

        for failure in failures { progress("failure: \(failure)") }
        return Report(
            watchers: watchers, changes: changes, members: members, fleetCache: fleetCache,
            slowest: Statistics(measured.map { $0.applied.max()! }),
            fastest: Statistics(measured.map { $0.applied.min()! }),
            floor: Statistics(measured.map { $0.delivered[0] }),
            floorAlone: Statistics(alone.map { $0.delivered[0] }),
            bareSlowest: Statistics(bare.map { $0.delivered.max()! }),
            failures: failures)
    }

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("... \(message)\n".utf8))
    }

    /// Kills the cluster and exits on SIGINT or SIGTERM, so that an interrupted run leaves no
    /// etcd behind.
    private static func killClusterOnInterrupt(_ cluster: EtcdCluster) -> [any DispatchSourceSignal] {
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
