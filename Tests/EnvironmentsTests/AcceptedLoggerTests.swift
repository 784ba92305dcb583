import Environments
import Logging
import TestSupport
import Testing

/// The library logs through the logger the application hands in (`EnvironmentOptions.logger`),
/// never through one of its own (swift-log's "accepting loggers" practice).
@Suite struct AcceptedLoggerTests {
    @Test func aValueOfTheWrongTypeIsLoggedThroughTheApplicationsLogger() throws {
        try withTemporaryDirectory { directory in
            _ = try directory.writeXML(["Debug": ["Port": "eighty", "Name": "app"]])
            let lines = KeptLog()
            var options = directory.options()
            options.logger = Logger(label: "my-daemon") { _ in lines.handler() }
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
