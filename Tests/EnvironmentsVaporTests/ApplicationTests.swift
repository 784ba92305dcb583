#if Vapor
    import Environments
    import EnvironmentsDaemon
    import EnvironmentsVapor
    import Foundation
    import Testing
    import VaporTesting

    /// A Vapor application (`.testing`) whose configuration comes from real files, kept live by
    /// the integration's lifecycle handler, asked through Vapor's in-memory tester and the real
    /// control socket.
    @Suite("A Vapor application with live configuration", .timeLimit(.minutes(2)))
    struct ApplicationTests {
        /// An application on `directory`'s configuration, with `GET /greeting`, booted.
        func makeApplication(_ directory: ConfigurationDirectory) async throws -> (
            Application, Environments.Environment
        ) {
            let app = try await Application.make(.testing)
            let integration = directory.integration
            let options = integration.selectingEnvironment(directory.options, for: app.environment)
            let environment = try Environments.Environment(options: options)
            app.useEnvironment(environment, configuration: integration)
            app.get("greeting") { req in req.environments[Settings.greeting] }
            try await app.asyncBoot()
            return (app, environment)
        }

        @Test("Routes read the live value: a file edit shows in the next request, without a restart")
        func fileEditIsLive() async throws {
            let directory = try ConfigurationDirectory()
            let (app, environment) = try await makeApplication(directory)
            #expect(app.environments === environment)
            #expect(environment.snapshot.environmentName == "Debug")  // Vapor's testing -> Debug
            try await app.testing().test(.GET, "greeting") { response in
                #expect(response.status == .ok)
                #expect(response.body.string == "first greeting")
            }
            let change = try await nextChange(of: environment) { try directory.write(greeting: "edited greeting") }
            #expect(change?.changedKeys == ["Greeting"])
            try await app.testing().test(.GET, "greeting") { response in
                #expect(response.body.string == "edited greeting")
            }
            #expect(app.environments[Settings.greeting] == "edited greeting")
            try await app.asyncShutdown()
        }

        @Test("A rejected edit keeps the last good values; the control socket reports the verdict")
        func rejectedEditKeepsLastGoodValues() async throws {
            let directory = try ConfigurationDirectory()
            let (app, environment) = try await makeApplication(directory)
            // LogLevel is declared one of swift-log's levels: "loud" is rejected, and the whole
            // file with it (its new greeting too).
            try directory.write(greeting: "never served", logLevel: "loud")
            let rejected = try await varlinkCall(
                directory.socketPath, method: "io.swiftenvironments.Configuration.Reload")
            #expect(rejected["error"] as? String == "io.swiftenvironments.Configuration.ReloadRejected")
            let verdict = (rejected["parameters"] as? [String: Any])?["verdict"] as? [String: Any]
            #expect("\(verdict ?? [:])".contains("LogLevel"))
            try await app.testing().test(.GET, "greeting") { response in
                #expect(response.body.string == "first greeting")
            }
            #expect(environment.snapshot.generation == 1)

            try directory.write(greeting: "fixed greeting")
            let applied = try await varlinkCall(
                directory.socketPath, method: "io.swiftenvironments.Configuration.Reload")
            #expect(applied["error"] == nil)
            try await app.testing().test(.GET, "greeting") { response in
                #expect(response.body.string == "fixed greeting")
            }
            try await app.asyncShutdown()
        }

        @Test("Vapor's shutdown stops the service gracefully: the control socket is gone")
        func shutdownStopsTheService() async throws {
            let directory = try ConfigurationDirectory()
            let (app, _) = try await makeApplication(directory)
            #expect(FileManager.default.fileExists(atPath: directory.socketPath))
            try await app.asyncShutdown()
            #expect(!FileManager.default.fileExists(atPath: directory.socketPath))
        }

        @Test("Booted by VaporTesting's synchronous boot, the service runs too")
        func synchronousBoot() async throws {
            let directory = try ConfigurationDirectory()
            let app = try await Application.make(.testing)
            let integration = directory.integration
            let environment = try Environments.Environment(
                options: integration.selectingEnvironment(directory.options, for: app.environment))
            app.useEnvironment(environment, configuration: integration)
            app.get("greeting") { req in req.environments[Settings.greeting] }
            let tester = try app.testing()  // Application.boot(): the handler's willBoot
            let change = try await nextChange(of: environment) { try directory.write(greeting: "edited greeting") }
            #expect(change?.changedKeys == ["Greeting"])
            try await tester.test(.GET, "greeting") { response in
                #expect(response.body.string == "edited greeting")
            }
            try await app.asyncShutdown()
            #expect(!FileManager.default.fileExists(atPath: directory.socketPath))
        }

        @Test("One request reads one snapshot, even when a change lands during it")
        func requestReadsOneSnapshot() async throws {
            let directory = try ConfigurationDirectory()
            let (app, environment) = try await makeApplication(directory)
            app.get("during-change") { req -> String in
                let before = req.environments[Settings.greeting]
                _ = try environment.setOverride(.string("overridden"), forKey: "Greeting")
                let after = req.environments[Settings.greeting]
                let live = req.application.environments[Settings.greeting]
                return "\(before)|\(after)|\(live)"
            }
            try await app.testing().test(.GET, "during-change") { response in
                #expect(response.body.string == "first greeting|first greeting|overridden")
            }
            try await app.testing().test(.GET, "greeting") { response in
                #expect(response.body.string == "overridden")
            }
            try await app.asyncShutdown()
        }
    }
#endif
