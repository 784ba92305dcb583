import Configuration
import Environments
import Foundation
import SystemPackage

/// Milliseconds from an XML property list on disk to the first value read from it: ours
/// (`Environment(options:)` then a typed read) and swift-configuration's
/// (`FileProvider<PropertyListSnapshot>`, `ConfigReader`, `string(forKey:)`). The files are in
/// the page cache: this is parsing and building, not disk.
struct ColdLoadBenchmark {
    struct Result: Sendable {
        var keyCount: Int
        var ours: Statistics
        var swiftConfiguration: Statistics?
    }

    let sizes: [Int]
    /// Sizes for which swift-configuration is measured too.
    let peerSizes: Set<Int>

    func run(progress: (String) -> Void) async throws -> [Result] {
        var results: [Result] = []
        for size in sizes {
            progress("cold load: \(size) keys")
            let directory = try Fixtures.makeDirectory("cold-\(size)")
            let settings = Fixtures.settings(size)
            try Fixtures.environmentsPlist(settings).write(to: URL(fileURLWithPath: directory + "/Environments.plist"))
            let peerFile = directory + "/peer.plist"
            try Fixtures.flatPlist(settings).write(to: URL(fileURLWithPath: peerFile))
            let key = Fixtures.keys(size)[size / 2]
            let expected = settings[key]!
            let repetitions = size >= 100_000 ? 3 : size >= 10_000 ? 7 : 21
            let options = EnvironmentOptions(
                applicationName: "environment-benchmarks", environment: "Release", configDirectory: directory,
                processEnvironment: [:])

            var ours: [Double] = []
            for _ in 0..<repetitions {
                let clock = ContinuousClock()
                let start = clock.now
                let environment = try Environment(options: options)
                let value = environment.string(key, default: "")
                ours.append((clock.now - start).milliseconds)
                guard value == expected else { throw BenchmarkError("ours read \(value) for \(key)") }
            }
            var peer: [Double] = []
            if peerSizes.contains(size) {
                for _ in 0..<repetitions {
                    let clock = ContinuousClock()
                    let start = clock.now
                    let reader = ConfigReader(
                        provider: try await FileProvider<PropertyListSnapshot>(filePath: FilePath(peerFile)))
                    let value = reader.string(forKey: ConfigKey(key))
                    peer.append((clock.now - start).milliseconds)
                    guard value == expected else { throw BenchmarkError("swift-configuration read \(value ?? "nil")") }
                }
            }
            results.append(
                Result(
                    keyCount: size, ours: Statistics(ours), swiftConfiguration: peer.isEmpty ? nil : Statistics(peer)))
        }
        return results
    }
}
