#if Vapor
    import Environments
    import EnvironmentsDaemon
    import EnvironmentsVapor
    import Foundation
    import Testing
    import VaporTesting

    /// `bootstrapEnvironments` loads `Environments.Environment.shared`, which a process
    /// bootstraps once: the one test in this module that does, in a child process.
    @Suite("bootstrapEnvironments and the shared environment", .serialized)
    struct BootstrapTests {
        @Test("Vapor's --env selects the environment; an unknown one fails the start and names the known ones")
        func bootstrapsTheSharedEnvironment() async throws {
            // In a process of its own (an exit test): the test process has one shared environment,
            // which other suites (SharedEnvironmentTests) bootstrap too.
            await #expect(processExitsWith: .success) {
                let directory = try ConfigurationDirectory()

                let staging = try await Application.make(.custom(name: "staging"))
                let error = #expect(throws: EnvironmentError.self) {
                    try staging.bootstrapEnvironments(directory.options, configuration: directory.integration)
                }
                #expect(error?.code == .unknownEnvironment)
                #expect("\(error.map { "\($0)" } ?? "")".contains("known environments: Debug, Release, Staging"))
                try await staging.asyncShutdown()

                let production = try await Application.make(.production)
                let environment = try production.bootstrapEnvironments(
                    directory.options, configuration: directory.integration)
                #expect(environment === Environments.Environment.shared)
                #expect(production.environments === Environments.Environment.shared)
                #expect(environment.snapshot.environmentName == "Release")
                #expect(Environments.Environment.shared.fetch("Greeting") as? String == "first greeting")
                production.get("greeting") { req in req.environments[Settings.greeting] }
                try await production.asyncBoot()
                try await production.testing().test(.GET, "greeting") { response in
                    #expect(response.body.string == "first greeting")
                }
                try await production.asyncShutdown()
            }
        }
    }
#endif
