#if SwiftConfiguration
    import Environments
    import Foundation

    /// A fresh configuration directory for one test, removed by ``withConfigurationDirectory(_:)``.
    struct ConfigurationDirectory: Sendable {
        let path: String

        init() throws {
            path = (NSTemporaryDirectory() as NSString).appendingPathComponent(
                "EnvironmentsConfigurationTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        func path(_ relative: String) -> String { (path as NSString).appendingPathComponent(relative) }

        /// Writes `Environments.plist` (or `relative`) as an XML property list, replacing the old
        /// file with a rename as editors do.
        func write(_ root: [String: Any], to relative: String = "Environments.plist") throws {
            let data = try PropertyListSerialization.data(fromPropertyList: root, format: .xml, options: 0)
            try write(data, to: relative)
        }

        /// Writes raw bytes to `relative`, through a temporary file and a rename.
        func write(_ data: Data, to relative: String) throws {
            let file = path(relative)
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let temporary = path(".\(UUID().uuidString).tmp")
            try data.write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, file) == 0 else { throw CocoaError(.fileWriteUnknown) }
        }

        func options(
            environment: String = "Production", processEnvironment: [String: String] = [:],
            secretKeys: Set<String> = [], restartRequiredKeys: Set<String> = [],
            validate: (@Sendable (EnvironmentSnapshot) throws -> Void)? = nil
        ) -> EnvironmentOptions {
            EnvironmentOptions(
                applicationName: "provider-tests", environment: environment, configDirectory: path,
                build: BuildInfo(defaultEnvironment: "Debug"), processEnvironment: processEnvironment,
                secretKeys: secretKeys, restartRequiredKeys: restartRequiredKeys, validate: validate)
        }
    }

    func withConfigurationDirectory<Result>(_ body: (ConfigurationDirectory) async throws -> Result) async throws
        -> Result
    {
        let directory = try ConfigurationDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        return try await body(directory)
    }
#endif
