import BenchmarkFixtures
import CHeapUsage
import Configuration
import Environments
import EnvironmentsDaemon
import Foundation
import SystemPackage

/// Heap bytes retained per key by a loaded configuration, and whether memory stays flat
/// over many reloads.
struct MemoryBenchmark {
    struct Results: Sendable {
        var keyCount = 0
        var oursBytesPerKey = 0.0
        var swiftConfigurationBytesPerKey = 0.0
        var dictionaryBytesPerKey = 0.0
        var reloads = (few: 10, many: 10_000)
        var residentAfterFewReloads = 0
        var residentAfterManyReloads = 0
        var heapAfterFewReloads = 0
        var heapAfterManyReloads = 0
    }

    let keyCount = 10_000
    let manyReloads: Int

    func run(progress: (String) -> Void) async throws -> Results {
        var results = Results()
        results.keyCount = keyCount
        results.reloads.many = max(manyReloads, 1)
        results.reloads.few = min(results.reloads.few, results.reloads.many)
        let directory = try Fixtures.makeDirectory("memory")
        let settings = Fixtures.settings(keyCount)
        let peerFile = try Fixtures.writeFiles(settings, in: directory).peer
        let options = Fixtures.options(directory)

        progress("memory: bytes per key, \(keyCount) keys")
        // Load once first, so that one-time allocations (caches, metadata) are not counted.
        _ = try Environment(options: options)
        _ = ConfigReader(provider: try await FileProvider<PropertyListSnapshot>(filePath: FilePath(peerFile)))
        let copy = Fixtures.settings(keyCount)

        var before = Heap.inUse
        let environment = try Environment(options: options)
        results.oursBytesPerKey = Double(Heap.inUse - before) / Double(keyCount)
        before = Heap.inUse
        let reader = ConfigReader(provider: try await FileProvider<PropertyListSnapshot>(filePath: FilePath(peerFile)))
        results.swiftConfigurationBytesPerKey = Double(Heap.inUse - before) / Double(keyCount)
        before = Heap.inUse
        let dictionary = Fixtures.settings(keyCount)
        results.dictionaryBytesPerKey = Double(Heap.inUse - before) / Double(keyCount)
        withExtendedLifetime((environment, reader, dictionary, copy)) {}

        progress("memory: \(manyReloads) reloads through the daemon's reload pipeline")
        let reloadDirectory = try Fixtures.makeDirectory("memory-reloads")
        let file = reloadDirectory + "/Environments.plist"
        let versions = try (0..<2).map { try Fixtures.environmentsPlist(Fixtures.settings(100, version: $0)) }
        try versions[0].write(to: URL(fileURLWithPath: file))
        let sink = try DatagramSink(directory: reloadDirectory)
        defer { sink.close() }
        let reloading = try Environment(options: Fixtures.options(reloadDirectory))
        let observation = reloading.onChange { change in blackHole(change.changedKeys.count) }
        defer { observation.cancel() }
        // The daemon's whole pipeline: a service with its journal entries, state file and
        // control socket, each reload asked for with a varlink `Reload` call as `envctl` makes it.
        let service = await BenchmarkService.start(reloading, in: reloadDirectory, journal: sink, watchFiles: false)
        defer { service.cancel() }
        for index in 1...results.reloads.many {
            try Fixtures.replace(file, with: versions[index % 2])
            let generation = reloading.snapshot.generation
            VarlinkReload.call(service.socket)
            guard reloading.snapshot.generation == generation + 1 else {
                throw BenchmarkError("reload \(index) was not applied")
            }
            if index == results.reloads.few {
                results.residentAfterFewReloads = Heap.residentBytes
                results.heapAfterFewReloads = Heap.inUse
            }
        }
        results.residentAfterManyReloads = Heap.residentBytes
        results.heapAfterManyReloads = Heap.inUse
        return results
    }
}

/// The process's memory, from glibc and the kernel.
enum Heap {
    /// Bytes the allocator has handed out and not yet taken back.
    static var inUse: Int {
        Int(heap_usage_in_use())
    }

    /// Bytes in large allocations that malloc mapped on their own (not in ``inUse``).
    static var mapped: Int {
        Int(heap_usage_mapped())
    }

    /// The resident set size.
    static var residentBytes: Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
