import BenchmarkFixtures
import Configuration
import Environments
import Foundation
import SystemPackage

/// Milliseconds from an XML property list on disk to the first value read from it: ours
/// (`Environment(options:)` then a typed read) and swift-configuration's
/// (`FileProvider<PropertyListSnapshot>`, `ConfigReader`, `string(forKey:)`); beside them the
/// floor of any load: reading our file and parsing it, with nothing built from the values, by
/// our XML parser and by Foundation's `PropertyListSerialization` (the faster is the floor).
///
/// Each load runs in a new process (this executable, with `--cold-child`), so that none
/// inherits a heap shaped by the loads before it: that is what "cold" means for a daemon that
/// starts. The files are in the page cache: this is parsing and building, not disk.
struct ColdLoadBenchmark {
    struct Result: Sendable {
        var keyCount: Int
        var ours: Statistics
        /// Ours with a declaration of every key (`Setting<String?>(key)`): the
        /// cost of checking every key and value against it at load.
        var declared: Statistics
        var swiftConfiguration: Statistics?
        /// The floor every loader pays: building a `[String: String]` of as many new keys and
        /// values (from the fixture's bytes), with no parsing at all, also in a new process.
        var dictionaryBuild: Statistics
        /// Reading our file and parsing it with our XML parser alone (into its values, nothing
        /// built from them: `BuildInfo(infoPlist:)`, which parses and looks up three keys).
        var parse: Statistics
        /// Reading the same file and parsing it with Foundation's `PropertyListSerialization`.
        var foundationParse: Statistics

        /// The floor of a load: reading the file and parsing it with the faster of the two
        /// parsers, and which one that is.
        var parseFloor: (median: Double, parser: String) {
            foundationParse.median < parse.median
                ? (foundationParse.median, "Foundation") : (parse.median, "ours")
        }
    }

    /// Who loads, in a child process.
    enum Loader: String, CaseIterable, Sendable {
        case ours, declared = "ours-declared", swiftConfiguration = "swift-configuration", dictionary
        case parse, foundationParse = "foundation-parse"
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
            try Fixtures.writeFiles(settings, in: directory)
            let repetitions = size >= 100_000 ? 5 : size >= 10_000 ? 9 : 21
            var samples: [Loader: [Double]] = [:]
            // Interleaved, so that a slow moment of the machine hits every loader alike.
            for _ in 0..<repetitions {
                for loader in Loader.allCases where loader != .swiftConfiguration || peerSizes.contains(size) {
                    samples[loader, default: []].append(try child(loader, directory: directory, keyCount: size))
                }
            }
            results.append(
                Result(
                    keyCount: size, ours: Statistics(samples[.ours] ?? []),
                    declared: Statistics(samples[.declared] ?? []),
                    swiftConfiguration: samples[.swiftConfiguration].map(Statistics.init),
                    dictionaryBuild: Statistics(samples[.dictionary] ?? []),
                    parse: Statistics(samples[.parse] ?? []),
                    foundationParse: Statistics(samples[.foundationParse] ?? [])))
        }
        return results
    }

    /// Runs one load in a new process and returns its milliseconds.
    private func child(_ loader: Loader, directory: String, keyCount: Int) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--cold-child", loader.rawValue, directory, String(keyCount)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, let milliseconds = Double(text) else {
            throw BenchmarkError("cold load by \(loader.rawValue) failed (exit \(process.terminationStatus)): \(text)")
        }
        return milliseconds
    }

    /// The child's side: loads once, checks the value, prints the milliseconds it took.
    static func runChild(_ loader: Loader, directory: String, keyCount: Int) async throws {
        let key = Fixtures.keys(keyCount)[keyCount / 2]
        let expected = Fixtures.value(key)
        let clock = ContinuousClock()
        let elapsed: Duration
        let value: String?
        switch loader {
        case .ours:
            let options = Fixtures.options(directory)
            let start = clock.now
            let environment = try Environment(options: options)
            value = environment.get(key, default: "")
            elapsed = clock.now - start
        case .declared:
            var options = Fixtures.options(directory)
            // Made before the clock starts, as a program's statics are made before it loads.
            let declaration = SettingsDeclaration(
                Fixtures.keys(keyCount).map { Setting<String?>($0) as any SettingDeclaring })
            options.declaration = declaration
            let start = clock.now
            let environment = try Environment(options: options)
            value = environment.get(key, default: "")
            elapsed = clock.now - start
            guard environment.snapshot.warnings.isEmpty else {
                throw BenchmarkError("the declared load has warnings: \(environment.snapshot.warnings.prefix(3))")
            }
        case .swiftConfiguration:
            let start = clock.now
            let reader = ConfigReader(
                provider: try await FileProvider<PropertyListSnapshot>(
                    filePath: FilePath(Fixtures.peerFile(in: directory))))
            value = reader.string(forKey: ConfigKey(key))
            elapsed = clock.now - start
        case .parse:
            let start = clock.now
            let bytes = try readFile(directory + "/Environments.plist")
            // Our parser alone: the document's values, and three lookups in its root.
            _ = try BuildInfo(infoPlist: bytes)
            elapsed = clock.now - start
            value = expected
        case .foundationParse:
            let start = clock.now
            let bytes = try readFile(directory + "/Environments.plist")
            let root = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
            let common = (root as? [String: Any])?["Common"] as? [String: Any]
            value = common?[key] as? String
            elapsed = clock.now - start
        case .dictionary:
            let pairs = Fixtures.keys(keyCount).map { (Array($0.utf8), Array(Fixtures.value($0).utf8)) }
            let start = clock.now
            var dictionary: [String: String] = [:]
            for (key, value) in pairs {
                dictionary[String(decoding: key, as: UTF8.self)] = String(decoding: value, as: UTF8.self)
            }
            value = dictionary[key]
            elapsed = clock.now - start
        }
        guard value == expected else { throw BenchmarkError("\(loader.rawValue) read \(value ?? "nil") for \(key)") }
        print(elapsed.milliseconds)
    }

    /// The bytes of the file at `path`, in one `read(2)` into an array of the file's size.
    private static func readFile(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BenchmarkError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw BenchmarkError("fstat \(path)") }
        let size = Int(status.st_size)
        return try [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var done = 0
            while done < size {
                let got = read(descriptor, buffer.baseAddress! + done, size - done)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { throw BenchmarkError("read \(path): \(String(cString: strerror(errno)))") }
                done += got
            }
            count = done
        }
    }
}
