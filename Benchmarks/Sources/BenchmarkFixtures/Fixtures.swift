import Environments
import Foundation

/// The configuration files the benchmarks read: ours (`Environments.plist` with a `Common`
/// section) and the peer's (a flat property list with the same keys and values).
package enum Fixtures {
    /// The key names of an `count`-key configuration, the way users name settings: a mix of
    /// short names (stored inline in a `String`) and longer ones (stored on the heap).
    package static func keys(_ count: Int) -> [String] {
        (0..<count).map { index in
            index.isMultiple(of: 2) ? "Setting\(index)" : "Service\(index)ConnectionTimeout"
        }
    }

    /// The value of `key` in version `version` of the configuration.
    package static func value(_ key: String, version: Int = 0) -> String {
        "https://\(key.lowercased()).example.com/v\(version)"
    }

    /// Key-value pairs of an `count`-key configuration in version `version`.
    package static func settings(_ count: Int, version: Int = 0) -> [String: String] {
        Dictionary(uniqueKeysWithValues: keys(count).map { ($0, value($0, version: version)) })
    }

    /// Options that load the `Release` environment of the `Environments.plist` in
    /// `directory`, untouched by this process's `APP_` variables (the environment and the
    /// directory are explicit, and the variables' layer is off).
    package static func options(_ directory: String) -> EnvironmentOptions {
        var options = EnvironmentOptions(
            applicationName: "environment-benchmarks", environment: "Release", configDirectory: directory)
        options.variablePrefix = nil
        return options
    }

    /// An XML `Environments.plist`: every setting in `Common`, an empty `Release` section.
    package static func environmentsPlist(_ settings: [String: String]) throws -> Data {
        try xml(["Common": settings, "Release": [String: String]()])
    }

    /// The peer's XML property list: the settings at the top level.
    package static func flatPlist(_ settings: [String: String]) throws -> Data {
        try xml(settings)
    }

    private static func xml(_ object: Any) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0)
    }

    /// The peer's file in `directory`, as ``writeFiles(_:in:)`` names it.
    package static func peerFile(in directory: String) -> String {
        directory + "/peer.plist"
    }

    /// Writes `settings` into `directory` as both contenders read them: our
    /// `Environments.plist` (``environmentsPlist(_:)``, what ``options(_:)`` loads) and the
    /// peer's flat property list (``flatPlist(_:)``, at ``peerFile(in:)``). Returns their paths.
    @discardableResult
    package static func writeFiles(_ settings: [String: String], in directory: String) throws
        -> (ours: String, peer: String)
    {
        let files = (ours: directory + "/Environments.plist", peer: peerFile(in: directory))
        try environmentsPlist(settings).write(to: URL(fileURLWithPath: files.ours))
        try flatPlist(settings).write(to: URL(fileURLWithPath: files.peer))
        return files
    }

    /// Writes `data` the way editors save: into a temporary file beside `path`, then renamed
    /// over it. Returns right after the rename.
    package static func replace(_ path: String, with data: Data) throws {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        try data.write(to: temporary)
        guard rename(temporary.path, path) == 0 else {
            throw BenchmarkError("rename \(temporary.path) -> \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// A new empty directory under the system's temporary directory.
    package static func makeDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "environment-benchmarks-\(getpid())/\(name)"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes every directory made by ``makeDirectory(_:)``.
    package static func removeAll() {
        try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "environment-benchmarks-\(getpid())")
    }
}

/// A benchmark that could not run.
package struct BenchmarkError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Keeps the optimizer from discarding a value that is computed only to be measured.
@inline(never)
package func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
