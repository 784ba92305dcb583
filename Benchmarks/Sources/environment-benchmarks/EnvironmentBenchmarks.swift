import ArgumentParser
import BenchmarkFixtures
import Foundation
import Logging

/// Runs the benchmarks of swift-environments side by side with apple/swift-configuration.
@main
struct EnvironmentBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "environment-benchmarks",
        abstract:
            "Lookup cost, reload latency, cold load and memory, beside apple/swift-configuration 1.4.0; the cost of rejecting hostile files.",
        discussion: "Build with -c release. Progress goes to standard error; the results to standard output.")

    enum Part: String, CaseIterable, ExpressibleByArgument {
        case lookup, reload, cold, memory, interop, soak, hostile

        /// The parts a run without `--only` runs: all but the soak, which takes minutes.
        static let byDefault: [Part] = allCases.filter { $0 != .soak }
    }

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Option(
        name: .customLong("only"),
        help: "Run only these parts; without it, all but soak.")
    var parts: [Part] = []

    @Option(help: "Changes per reload-latency contender.")
    var changes = 100

    @Option(help: "Changes for swift-configuration's default 15 s poll (each takes up to 15 s).")
    var defaultPollChanges = 5

    @Option(help: "Reloads for the memory measurement.")
    var reloads = 10_000

    @Option(help: "Minutes the soak part runs (fractions allowed: 0.2 for a smoke run).")
    var soakMinutes = 10.0

    @Flag(help: "Soak: run the daemon's file watcher too, so that its reloads race the Reload calls.")
    var soakWatchFiles = false

    @Option(help: "Soak: reading threads (0 measures what reloads cost with nothing else running).")
    var soakReaders = 4

    @Option(help: "Hostile: rejected reloads per hostile drop-in.")
    var hostileRounds = 5

    @Option(help: "Hostile: keys in the chain of references.")
    var hostileChain = 100_000

    @Option(parsing: .upToNextOption, help: .hidden)
    var coldChild: [String] = []

    func run() async throws {
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        defer { if coldChild.isEmpty { Fixtures.removeAll() } }
        let selected = Set(parts.isEmpty ? Part.byDefault : parts)
        warnIfDebugBuild()
        if coldChild.count == 3, let loader = ColdLoadBenchmark.Loader(rawValue: coldChild[0]),
            let keyCount = Int(coldChild[2])
        {
            try await ColdLoadBenchmark.runChild(loader, directory: coldChild[1], keyCount: keyCount)
            return
        }
        var report = Report()
        if selected.contains(.lookup) {
            report.lookup = try await LookupBenchmark().run(progress: progress)
        }
        if selected.contains(.reload) {
            let benchmark = ReloadLatencyBenchmark(changes: changes, defaultPollChanges: defaultPollChanges)
            for contender in ReloadLatencyBenchmark.Contender.reloadPart {
                report.reloads.append(try await benchmark.run(contender, progress: progress))
            }
        }
        if selected.contains(.interop) {
            var interop = InteropBenchmark.Results()
            (interop.oursProvider, interop.swiftConfigurationFile) = try await LookupBenchmark().runThroughReaders(
                progress: progress)
            let benchmark = ReloadLatencyBenchmark(changes: changes, defaultPollChanges: defaultPollChanges)
            for contender in [
                ReloadLatencyBenchmark.Contender.oursProvider, .swiftConfiguration100ms, .swiftConfigurationDefault,
            ] {
                // The reload part measured the peer's watch the same way: do not wait for it twice.
                if let measured = report.reloads.first(where: { $0.contender == contender }) {
                    interop.watches.append(measured)
                } else {
                    interop.watches.append(try await benchmark.run(contender, progress: progress))
                }
            }
            report.interop = interop
        }
        // Before the memory and cold parts, whose large configurations grow the heap for good.
        if selected.contains(.hostile) {
            report.hostile = try HostileBenchmark(rounds: max(hostileRounds, 1), chainLength: max(hostileChain, 2))
                .run(progress: progress)
        }
        // Memory before the cold loads, whose 100,000-key files grow the heap for good.
        if selected.contains(.memory) {
            report.memory = try await MemoryBenchmark(manyReloads: reloads).run(progress: progress)
        }
        if selected.contains(.cold) {
            report.coldLoads = try await ColdLoadBenchmark(
                sizes: [100, 10_000, 100_000], peerSizes: [100, 10_000, 100_000]
            ).run(progress: progress)
        }
        // Last, so that nothing else runs while it samples the process's memory.
        if selected.contains(.soak) {
            report.soak = try await SoakBenchmark(
                minutes: soakMinutes, watchFiles: soakWatchFiles, readerCount: soakReaders
            ).run(
                progress: progress)
        }
        print(json ? try report.json() : report.table())
        if let soak = report.soak, !soak.passed {
            progress(
                "soak FAILED: \(soak.violations) inconsistent reads, \(soak.reloadFailures) failed reloads")
            throw ExitCode.failure
        }
    }
}
