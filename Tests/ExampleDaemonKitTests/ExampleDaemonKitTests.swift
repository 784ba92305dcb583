import ArgumentParser
import Environments
import ExampleDaemonKit
import Foundation
import Testing

/// The example daemons' shared pieces, through their API: the command line, the options they
/// bootstrap with, the built-in configuration and the declaration it must satisfy.
@Suite("example daemons' kit")
struct ExampleDaemonKitTests {
    /// An empty directory: no Environments.plist, so the built-in configuration applies.
    private static func emptyDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("example-kit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func environment(_ arguments: [String], in directory: URL) throws -> Environment {
        let parsed = try ExampleArguments.parse(["--config-dir", directory.path] + arguments)
        var options = parsed.environmentOptions(build: BuildInfo(defaultEnvironment: "Release"))
        options.processEnvironment = [:]
        return try Environment(options: options)
    }

    @Test(
        "the built-in configuration satisfies the declaration in every environment it defines",
        arguments: ["Debug", "Release", "Staging", "Production"])
    func builtInConfigurationLoads(environmentName: String) throws {
        let directory = try Self.emptyDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Production requires a database password, which only a credential gives.
        if environmentName == "Production" {
            #expect(throws: EnvironmentError.self) {
                _ = try Self.environment(["--environment", environmentName], in: directory)
            }
            return
        }
        let environment = try Self.environment(["--environment", environmentName], in: directory)
        let snapshot = environment.snapshot
        #expect(snapshot.environmentName == environmentName)
        #expect(snapshot.warnings.isEmpty, "no warnings: \(snapshot.warnings)")
        #expect(snapshot.files.isEmpty, "nothing read from disk: \(snapshot.files)")
        let host = snapshot[ExampleSettings.apiHost]
        #expect(snapshot[ExampleSettings.apiBaseURL]?.absoluteString == "https://\(host ?? "")/v1")
        #expect(snapshot[ExampleSettings.listenPort] == 8080)
        #expect(snapshot[ExampleSettings.logLevel] == (environmentName == "Debug" ? "debug" : "info"))
    }

    @Test("the environment comes from --environment, else the build's default; an unknown one is refused")
    func selection() throws {
        let directory = try Self.emptyDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try Self.environment([], in: directory).snapshot.environmentName == "Release")
        #expect(
            try Self.environment(["--environment", "Staging"], in: directory).snapshot.environmentName == "Staging")
        let error = #expect(throws: EnvironmentError.self) {
            _ = try Self.environment(["--environment", "Stagnig"], in: directory)
        }
        #expect(error?.code == .unknownEnvironment)
    }

    @Test("the application's own rule: Production refuses an http APIBaseUrl, naming the key and the file")
    func productionRequiresHTTPS() throws {
        let directory = try Self.emptyDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Environments.plist")
        let plist: [String: Any] = [
            "Common": ["APIBaseUrl": "http://api.example.com/v1", "Database": ["Password": "not-shown"]],
            "Production": [String: Any](), "Staging": [String: Any](),
        ]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: file)
        let error = #expect(throws: EnvironmentError.self) {
            _ = try Self.environment(["--environment", "Production"], in: directory)
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.key == "APIBaseUrl")
        #expect(error?.file == file.path)
        #expect(!"\(error.map { "\($0)" } ?? "")".contains("not-shown"), "no secret in the error")
        // The same file is fine in Staging (the rule is Production's).
        #expect(
            try Self.environment(["--environment", "Staging"], in: directory).snapshot.environmentName == "Staging")
    }

    @Test("--instance selects the instance; --print-schema is a flag; an unknown option is refused")
    func commandLine() throws {
        let parsed = try ExampleArguments.parse(["--instance", "eu", "--print-schema"])
        #expect(parsed.printSchema)
        #expect(parsed.environmentOptions(build: BuildInfo()).instance == "eu")
        #expect(throws: (any Error).self) { _ = try ExampleArguments.parse(["--config-directory", "/etc"]) }
    }

    @Test("the declaration as JSON Schema names every setting, its bounds and which one is secret")
    func schema() throws {
        let text = ExampleSettings.declaration.jsonSchemaText(title: "example-daemon")
        let schema = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(schema["title"] as? String == "example-daemon")
        let keys = ExampleSettings.declaration.settings.map(\.key)
        #expect(keys.count == 10)
        for key in keys { #expect(text.contains("\"\(key.split(separator: ".").last!)\""), "\(key) in the schema") }
        #expect(text.contains("65535"))
        // Read back: the secret and the restart-only setting are marked as such.
        let read = try SettingsDeclaration(jsonSchema: Data(text.utf8))
        let byKey = Dictionary(uniqueKeysWithValues: read.settings.map { ($0.key, $0) })
        #expect(byKey["Database.Password"]?.isSecret == true)
        #expect(byKey["ListenPort"]?.isRestartOnly == true)
        #expect(byKey.values.filter(\.isSecret).count == 1)
    }
}
