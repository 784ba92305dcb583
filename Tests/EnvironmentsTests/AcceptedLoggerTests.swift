import Environments
import Logging
import Synchronization
import Testing

/// The library logs through the logger the application hands in (`EnvironmentOptions.logger`),
/// never through one of its own (swift-log's "accepting loggers" practice).
@Suite struct AcceptedLoggerTests {
    /// What a logger was asked to log: level, message and metadata.
    final class Lines: Sendable {
        let lines = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
        var all: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] { lines.withLock { $0 } }
    }

    /// A handler that keeps every entry in memory, as swift-log's own tests do.
    struct KeepingHandler: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.lines.withLock { $0.append((event.level, event.message.description, event.metadata ?? [:])) }
        }
    }

    @Test func aValueOfTheWrongTypeIsLoggedThroughTheApplicationsLogger() throws {
        try withTemporaryDirectory { directory in
            _ = try directory.writeXML(["Debug": ["Port": "eighty", "Name": "app"]])
            let lines = Lines()
            var options = directory.options()
            options.logger = Logger(label: "my-daemon") { _ in KeepingHandler(lines: lines) }
            let environment = try Environment(options: options)

            #expect(environment.get("Port", default: 80) == 80)
            #expect(environment.get("Name", default: "none") == "app")
            #expect(environment[Setting<Int>("Port", default: 81)] == 81)
            #expect(environment.snapshot.scoped("").get("Port", default: 82) == 82)

            let warnings = lines.all.filter { $0.message == "using the default for a value of the wrong type" }
            #expect(warnings.count == 3, "\(lines.all)")
            #expect(warnings.allSatisfy { $0.level == .warning })
            #expect(warnings.first?.metadata["error"]?.description.contains("'Port' is a string") == true)
            #expect(warnings.dropFirst().first?.metadata["key"] == "Port")
        }
    }
}
