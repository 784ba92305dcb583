import ArgumentParser
import BenchmarkFixtures
import Configuration
import Environments
import EnvironmentsConfiguration
import Foundation
import Synchronization
import SystemPackage

/// Nanoseconds per lookup in a 100-key configuration: ours through `Environment.shared`,
/// swift-configuration's `ConfigReader` over `FileProvider<PropertyListSnapshot>`, and a plain
/// `[String: String]`, each reading every key in turn.
struct LookupBenchmark {
    struct Results: Sendable {
        var dictionary = 0.0
        var oursFetch = 0.0
        var oursString = 0.0
        var swiftConfiguration = 0.0
        var oursFetchTwoThreads = 0.0
        var oursStringTwoThreads = 0.0
        var oursFetchDuringReloads = 0.0
        var reloadsPerSecond = 0.0
        /// Two threads, each starting at its own point of the key list.
        var oursFetchTwoThreadsOwnOrder = 0.0
        /// The plain dictionary on two threads reading the same keys in the same order.
        var dictionaryTwoThreads = 0.0
        /// `fetch` on a reference held by the caller (no `Environment.shared` access).
        var heldFetch = 0.0
        /// The same on two threads at once, reading the same keys in the same order: without
        /// the caller's retain of `Environment.shared`, the writes the threads share are the
        /// dictionary's (the key's and the value's reference counts).
        var heldFetchTwoThreads = 0.0
        /// `fetch` on a snapshot held by the caller (no store, no reader slot).
        var snapshotEntry = 0.0
        /// On a machine with more than two processors, one thread per processor (at most 8):
        /// how many, and `fetch` and the plain dictionary on that many threads at once. 0 for none.
        var manyThreads = 0
        var oursFetchManyThreads = 0.0
        var dictionaryManyThreads = 0.0
    }

    let keyCount = 100

    /// The files, our environment over them and the peer's reader over the same settings.
    struct Contenders {
        let keys: [String]
        let settings: [String: String]
        let ourFile: String
        let environment: Environment
        let reader: ConfigReader
    }

    /// Writes the files in a directory of their own. `shared`: our environment is
    /// `Environment.shared`, bootstrapped from them (once per process: only the lookup part
    /// measures the shared environment); else an `Environment(options:)` of its own.
    func prepare(_ name: String, shared: Bool) async throws -> Contenders {
        let keys = Fixtures.keys(keyCount)
        let settings = Fixtures.settings(keyCount)
        let directory = try Fixtures.makeDirectory(name)
        let (ourFile, peerFile) = try Fixtures.writeFiles(settings, in: directory)
        let environment =
            shared
            ? try Environment.bootstrap(Fixtures.options(directory))
            : try Environment(options: Fixtures.options(directory))
        let reader = ConfigReader(provider: try await FileProvider<PropertyListSnapshot>(filePath: FilePath(peerFile)))
        return Contenders(keys: keys, settings: settings, ourFile: ourFile, environment: environment, reader: reader)
    }

    func run(progress: (String) -> Void) async throws -> Results {
        let contenders = try await prepare("lookup", shared: true)
        let (keys, settings, ourFile, reader) = (
            contenders.keys, contenders.settings, contenders.ourFile, contenders.reader
        )

        // Every contender must find every key, or the comparison means nothing.
        for key in keys {
            let expected = settings[key]
            guard Environment.shared.fetch(key) as? String == expected,
                Environment.shared.get(key, default: "") == expected,
                reader.string(forKey: ConfigKey(key)) == expected
            else { throw BenchmarkError("lookup fixtures disagree at \(key)") }
        }

        var results = Results()
        progress("lookup: plain dictionary")
        results.dictionary =
            Timing.nanosecondsPerOperation(operationsPerRound: keys.count) {
                for key in keys { blackHole(settings[key]) }
            }.nanoseconds
        progress("lookup: Environment.shared.fetch")
        let fetch = Timing.nanosecondsPerOperation(operationsPerRound: keys.count) {
            for key in keys { blackHole(Environment.shared.fetch(key)) }
        }
        results.oursFetch = fetch.nanoseconds
        progress("lookup: Environment.shared.string")
        let string = Timing.nanosecondsPerOperation(operationsPerRound: keys.count) {
            for key in keys { blackHole(Environment.shared.get(key, default: "")) }
        }
        results.oursString = string.nanoseconds
        progress("lookup: swift-configuration ConfigReader.string(forKey:)")
        results.swiftConfiguration =
            Timing.nanosecondsPerOperation(operationsPerRound: keys.count, samples: 5) {
                for key in keys { blackHole(reader.string(forKey: ConfigKey(key))) }
            }.nanoseconds

        progress("lookup: two threads")
        // Both threads read the same keys in the same order: each value's reference count is
        // then written by both cores at nearly the same time (the worst case), by a `fetch` as
        // by the dictionary, which returns the same kind of string. A `fetch` must write
        // nothing else that the threads share (the snapshot's or the store's reference count,
        // a key's): its time on two threads over its time on one stays that of the dictionary.
        // With its own starting point in the list, each thread mostly reads other keys.
        let ownOrder = [keys, Array(keys[(keys.count / 2)...] + keys[..<(keys.count / 2)])]
        // One sample of each in turn (Timing.interleavedConcurrentNanosecondsPerOperation): a
        // spell in which the machine runs the two threads as if on one core falls on all of
        // them, the dictionary included.
        typealias Contender = Timing.ConcurrentContender
        let twoThreads = Timing.interleavedConcurrentNanosecondsPerOperation(
            threads: 2,
            [
                Contender(rounds: fetch.rounds, operationsPerRound: keys.count) { _ in
                    for key in keys { blackHole(Environment.shared.fetch(key)) }
                },
                Contender(rounds: fetch.rounds, operationsPerRound: keys.count) { thread in
                    for key in ownOrder[thread] { blackHole(Environment.shared.fetch(key)) }
                },
                Contender(rounds: string.rounds, operationsPerRound: keys.count) { _ in
                    for key in keys { blackHole(Environment.shared.get(key, default: "")) }
                },
                Contender(rounds: string.rounds, operationsPerRound: keys.count) { _ in
                    for key in keys { blackHole(settings[key]) }
                },
                // The breakdown's: `fetch` on a reference each thread holds.
                Contender(rounds: fetch.rounds, operationsPerRound: keys.count) { _ in
                    let environment = Environment.shared
                    for key in keys { blackHole(environment.fetch(key)) }
                },
            ])
        results.oursFetchTwoThreads = twoThreads[0]
        results.oursFetchTwoThreadsOwnOrder = twoThreads[1]
        results.oursStringTwoThreads = twoThreads[2]
        results.dictionaryTwoThreads = twoThreads[3]
        results.heldFetchTwoThreads = twoThreads[4]
        let processors = ProcessInfo.processInfo.activeProcessorCount
        if processors > 2 {
            results.manyThreads = min(processors, 8)
            progress("lookup: \(results.manyThreads) threads")
            let manyThreads = Timing.interleavedConcurrentNanosecondsPerOperation(
                threads: results.manyThreads,
                [
                    Contender(rounds: fetch.rounds, operationsPerRound: keys.count) { _ in
                        for key in keys { blackHole(Environment.shared.fetch(key)) }
                    },
                    Contender(rounds: string.rounds, operationsPerRound: keys.count) { _ in
                        for key in keys { blackHole(settings[key]) }
                    },
                ])
            results.oursFetchManyThreads = manyThreads[0]
            results.dictionaryManyThreads = manyThreads[1]
        }

        progress("lookup: breakdown")
        let held = Environment.shared
        results.heldFetch =
            Timing.nanosecondsPerOperation(operationsPerRound: keys.count) {
                for key in keys { blackHole(held.fetch(key)) }
            }.nanoseconds
        let snapshot = held.snapshot
        results.snapshotEntry =
            Timing.nanosecondsPerOperation(operationsPerRound: keys.count) {
                for key in keys { blackHole(snapshot.fetch(key)) }
            }.nanoseconds

        progress("lookup: during 100 reloads a second")
        let reloader = PeriodicReloader(file: ourFile, keyCount: keyCount, interval: .milliseconds(10))
        reloader.start()
        let started = ContinuousClock.now
        results.oursFetchDuringReloads =
            Timing.nanosecondsPerOperation(operationsPerRound: keys.count) {
                for key in keys { blackHole(Environment.shared.fetch(key)) }
            }.nanoseconds
        let applied = try reloader.stop()
        results.reloadsPerSecond = Double(applied) / (ContinuousClock.now - started).nanoseconds * 1e9
        return results
    }
}

/// Rewrites a configuration file and reloads `Environment.shared` at a steady rate, on a
/// thread of its own, so that every reload swaps in a new snapshot.
final class PeriodicReloader: Sendable {
    private let file: String
    private let keyCount: Int
    private let interval: Duration
    private let state = Mutex<(stop: Bool, applied: Int, error: String?)>((false, 0, nil))
    private let finished = DispatchSemaphore(value: 0)

    init(file: String, keyCount: Int, interval: Duration) {
        self.file = file
        self.keyCount = keyCount
        self.interval = interval
    }

    func start() {
        let thread = Thread { [self] in
            let clock = ContinuousClock()
            var next = clock.now
            var version = 1
            while !state.withLock({ $0.stop }) {
                do {
                    try Fixtures.replace(
                        file, with: Fixtures.environmentsPlist(Fixtures.settings(keyCount, version: version)))
                    if case .applied = try Environment.shared.reload() {
                        state.withLock { $0.applied += 1 }
                    }
                } catch {
                    state.withLock { $0.error = "\(error)" }
                }
                version += 1
                next = next + interval
                let now = clock.now
                if next > now { Thread.sleep(forTimeInterval: (next - now).nanoseconds / 1e9) }
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops the thread and returns how many reloads it applied.
    func stop() throws -> Int {
        state.withLock { $0.stop = true }
        finished.wait()
        let (_, applied, error) = state.withLock { $0 }
        if let error { throw BenchmarkError("reloading during lookups failed: \(error)") }
        return applied
    }
}
