import Environments
import EnvironmentsDaemon
import Foundation
import Logging
import Synchronization
import SystemdSupport
import Testing

/// The public seam for sources (``ConfigurationSource``, `EnvironmentService.reload(from:revision:)`,
/// `onReload(_:)`), proved by a source written against the public API alone: a Kubernetes-style
/// volume of key-per-file values below a host's own files, in a real `EnvironmentService`.
@Suite struct KeyPerFileSourceTests {
    /// A host directory with `Environments.plist` and a Kubernetes-style volume beside it.
    struct Fixture {
        let root: URL
        var host: String { root.appendingPathComponent("etc").path }
        var volume: String { root.appendingPathComponent("secrets").path }
        private var generations = 0

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("SourceSeam-\(UUID().uuidString)")
            try FileManager.default.createDirectory(atPath: root.path + "/etc", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root.path + "/secrets", withIntermediateDirectories: true)
            // The host's own file: it overrides the volume's Port.
            let plist = try PropertyListSerialization.data(
                fromPropertyList: ["Common": ["Port": "8080"], "Test": [String: Any]()], format: .xml, options: 0)
            try plist.write(to: root.appendingPathComponent("etc/Environments.plist"))
        }

        /// Writes `values` as the volume's next generation and swaps `..data` to it, as the
        /// kubelet does: a new hidden directory, a new link renamed over the old one, a link per
        /// key through `..data`.
        mutating func publish(_ values: [String: String]) throws {
            generations += 1
            let generation = "..2025_06_01_12_00_0\(generations).000000001"
            let files = FileManager.default
            try files.createDirectory(atPath: volume + "/" + generation, withIntermediateDirectories: false)
            for (key, value) in values {
                try Data((value + "\n").utf8).write(to: URL(fileURLWithPath: volume + "/" + generation + "/" + key))
                if (try? files.destinationOfSymbolicLink(atPath: volume + "/" + key)) == nil {
                    try files.createSymbolicLink(atPath: volume + "/" + key, withDestinationPath: "..data/" + key)
                }
            }
            try files.createSymbolicLink(atPath: volume + "/..data_tmp", withDestinationPath: generation)
            #expect(rename(volume + "/..data_tmp", volume + "/..data") == 0)
        }

        /// The options of an application on the host's files and the volume, whose `validate`
        /// refuses a `Port` that is not a port number.
        func options(_ source: KeyPerFileSource) -> EnvironmentOptions {
            var options = EnvironmentOptions(
                applicationName: "seam", environment: "Test", configDirectory: host,
                validate: { snapshot in
                    for key in ["Port", "Database.Port"] {
                        guard case .string(let text)? = snapshot.value(forKey: key) else { continue }
                        guard let port = Int(text), (1...65535).contains(port) else {
                            throw EnvironmentError.rejected(key: key, in: snapshot, reason: "must be a port number")
                        }
                    }
                })
            options.sources = [source]
            return options
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    /// The reports an observer received.
    final class Reports: Sendable {
        let reports = Mutex<[ReloadReport]>([])
    }

    /// A service inside the test process: no systemd, no control socket, no state file, files
    /// not watched (the source's reloads are the subject).
    static func service(_ environment: Environment) -> EnvironmentService {
        var configuration = EnvironmentService.Configuration()
        configuration.watchFiles = false
        configuration.stateFile = nil
        configuration.systemdNotifications = false
        configuration.controlSocket = .disabled
        configuration.journalOutput = .stderrWithPriorityPrefix
        return EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: configuration,
            logger: Logger(label: "SourceSeamTests"))
    }

    /// Runs `service` while `body` runs, once it is ready, and stops it after.
    static func whileRunning(_ service: EnvironmentService, _ body: @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            await service.waitUntilReady()
            try await body()
            group.cancelAll()
        }
    }

    @Test func valuesComeWithTheirFileAsProvenanceBelowTheHostsFiles() async throws {
        var fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.publish(["Database.Password": "s3cret-pass", "Region": "eu-1", "Port": "9090"])
        let source = await KeyPerFileSource.open(directory: fixture.volume, secret: true)
        let environment = try Environment(options: fixture.options(source))

        #expect(environment.get("Database.Password", default: "") == "s3cret-pass")
        #expect(environment.get("Region", default: "") == "eu-1")
        // The host's file overrides the source setting by setting.
        #expect(environment.get("Port", default: 0) == 8080)
        let password = try #require(environment.configuredValue(forKey: "Database.Password"))
        #expect(password.source.file == "keyfiles:\(fixture.volume)/Database.Password")
        #expect(password.source.layer == .common)
        #expect(password.isSecret)
        #expect(password.displayValue() == "<redacted>")
        #expect(environment.configuredValue(forKey: "Port")?.source.file == fixture.host + "/Environments.plist")
    }

    @Test func aPlainDirectoryAsSystemdCredentialsAreMountedIsReadToo() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try Data("token-1\n".utf8).write(to: URL(fileURLWithPath: fixture.volume + "/ApiToken"))
        let source = await KeyPerFileSource.open(directory: fixture.volume)
        let environment = try Environment(options: fixture.options(source))
        #expect(environment.get("ApiToken", default: "") == "token-1")
        #expect(environment.configuredValue(forKey: "ApiToken")?.source.file == "keyfiles:\(fixture.volume)/ApiToken")
    }

    @Test func aChangeIsAppliedThroughAReloadNamedAfterTheSource() async throws {
        var fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.publish(["Region": "eu-1"])
        let source = await KeyPerFileSource.open(directory: fixture.volume)
        let environment = try Environment(options: fixture.options(source))
        let service = Self.service(environment)
        let seen = Reports()
        await service.onReload { report in seen.reports.withLock { $0.append(report) } }
        let next = fixture
        try await Self.whileRunning(service) {
            var fixture = next
            try fixture.publish(["Region": "eu-2"])
            let report = await source.directoryChanged(in: service)
            #expect(report.outcome == .applied)
            #expect(report.trigger == "keyfiles")
            #expect(report.error == nil)
            #expect(report.generation == environment.snapshot.generation)
            #expect(environment.get("Region", default: "") == "eu-2")
            // Nothing changed: unchanged, same generation.
            let again = await source.directoryChanged(in: service)
            #expect(again.outcome == .unchanged)
            #expect(again.generation == report.generation)
        }
        let reports = seen.reports.withLock { $0 }
        #expect(reports.map(\.outcome) == [.loaded, .applied, .unchanged])
        #expect(reports.map(\.trigger) == ["start", "keyfiles", "keyfiles"])
    }

    @Test func aBadValueIsRejectedAndTheLastGoodConfigurationStays() async throws {
        var fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.publish(["Database.Port": "5432"])
        let source = await KeyPerFileSource.open(directory: fixture.volume)
        let environment = try Environment(options: fixture.options(source))
        let service = Self.service(environment)
        let next = fixture
        try await Self.whileRunning(service) {
            var fixture = next
            let generation = environment.snapshot.generation
            try fixture.publish(["Database.Port": "not-a-port"])
            let rejected = await source.directoryChanged(in: service)
            #expect(rejected.outcome == .rejected)
            #expect(rejected.trigger == "keyfiles")
            #expect(rejected.generation == generation)
            let error = try #require(rejected.error)
            #expect(error.code == .validationFailed)
            #expect(error.key == "Database.Port")
            #expect(error.file == "keyfiles:\(fixture.volume)/Database.Port")
            #expect(environment.get("Database.Port", default: 0) == 5432)
            #expect(environment.snapshot.generation == generation)

            // The next good value applies.
            try fixture.publish(["Database.Port": "6432"])
            #expect(await source.directoryChanged(in: service).outcome == .applied)
            #expect(environment.get("Database.Port", default: 0) == 6432)
        }
    }

    @Test func aSourceThatCannotReadRejectsTheReloadWithItsOrigin() async throws {
        var fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.publish(["Region": "eu-1"])
        let source = await KeyPerFileSource.open(directory: fixture.volume)
        let environment = try Environment(options: fixture.options(source))
        let service = Self.service(environment)
        let next = fixture
        try await Self.whileRunning(service) {
            var fixture = next
            try fixture.publish(["Region": String(repeating: "x", count: KeyPerFileSource.maximumFileSize + 1)])
            let report = await source.directoryChanged(in: service)
            #expect(report.outcome == .rejected)
            #expect(report.error?.code == .fileUnreadable)
            #expect(report.error?.file == "keyfiles:\(fixture.volume)/Region")
            #expect(environment.get("Region", default: "") == "eu-1")
            // A note in STATUS= (no systemd here: it must simply not fail).
            await service.setStatusNote("volume over its limit", from: source)
            await service.setStatusNote(nil, from: source)
        }
    }
}
