import BenchmarkFixtures
import Configuration
import Environments
import EnvironmentsConfiguration
import Foundation

/// swift-configuration's `ConfigReader` over our `EnvironmentProvider`, beside the same reader
/// over swift-configuration's own file providers: lookups, and watches that see a saved file.
enum InteropBenchmark {
    struct Results: Sendable {
        /// ns per `ConfigReader.string(forKey:)` over `EnvironmentProvider`.
        var oursProvider = 0.0
        /// ns per `ConfigReader.string(forKey:)` over `FileProvider<PropertyListSnapshot>`.
        var swiftConfigurationFile = 0.0
        /// `watchString(forKey:)` latencies: ours, the peer's 100 ms poll, its default poll.
        var watches: [ReloadLatencyBenchmark.Result] = []
    }
}

extension LookupBenchmark {
    /// ns per `ConfigReader.string(forKey:)` over our provider and over the peer's file
    /// provider, on the lookup part's 100-key configuration, same keys in the same order.
    func runThroughReaders(progress: (String) -> Void) async throws -> (ours: Double, peer: Double) {
        // An environment of its own: the lookup part, in the same run, bootstrapped the shared
        // one (once per process) and changed its values since.
        let contenders = try await prepare("interop", shared: false)
        let (keys, settings, peer) = (contenders.keys, contenders.settings, contenders.reader)
        let ours = ConfigReader(provider: EnvironmentProvider(environment: contenders.environment))
        for key in keys {
            guard ours.string(forKey: ConfigKey(key)) == settings[key],
                peer.string(forKey: ConfigKey(key)) == settings[key]
            else { throw BenchmarkError("interop fixtures disagree at \(key)") }
        }
        progress("interop: ConfigReader.string(forKey:) over EnvironmentProvider and over FileProvider")
        // Interleaved, several times each, so that a noisy stretch of the machine hits both.
        var bestOurs = Double.infinity
        var bestPeer = Double.infinity
        for _ in 0..<3 {
            bestOurs = min(
                bestOurs,
                Timing.nanosecondsPerOperation(operationsPerRound: keys.count, samples: 5) {
                    for key in keys { blackHole(ours.string(forKey: ConfigKey(key))) }
                }.nanoseconds)
            bestPeer = min(
                bestPeer,
                Timing.nanosecondsPerOperation(operationsPerRound: keys.count, samples: 5) {
                    for key in keys { blackHole(peer.string(forKey: ConfigKey(key))) }
                }.nanoseconds)
        }
        return (bestOurs, bestPeer)
    }
}
