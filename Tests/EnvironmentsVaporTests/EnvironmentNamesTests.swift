#if Vapor
    import Environments
    import EnvironmentsVapor
    import Testing
    import Vapor

    @Suite("Vapor's environment names, mapped to ours")
    struct EnvironmentNamesTests {
        @Test("Vapor's standard names select the library's build names")
        func standardNames() throws {
            let configuration = VaporEnvironmentsConfiguration()
            #expect(configuration.environmentName(for: .production) == "Release")
            #expect(configuration.environmentName(for: .development) == "Debug")
            #expect(configuration.environmentName(for: .testing) == "Debug")
            // What Vapor detects for `--env prod`.
            let detected = try Environment.detect(arguments: ["app", "--env", "prod"])
            #expect(configuration.environmentName(for: detected) == "Release")
        }

        @Test("A name the table does not hold is used as written; the table can add it")
        func customNames() {
            var configuration = VaporEnvironmentsConfiguration()
            #expect(configuration.environmentName(for: .custom(name: "staging")) == "staging")
            configuration.names["staging"] = "Staging"
            #expect(configuration.environmentName(for: .custom(name: "staging")) == "Staging")
        }

        @Test("The application's choice wins, then $APP_ENVIRONMENT, then Vapor's name")
        func precedence() {
            let configuration = VaporEnvironmentsConfiguration()
            var options = EnvironmentOptions(applicationName: "precedence")
            let mapped = configuration.selectingEnvironment(options, for: .production, processEnvironment: [:])
            #expect(mapped.environment == "Release")
            let fromVariable = configuration.selectingEnvironment(
                options, for: .production, processEnvironment: ["APP_ENVIRONMENT": "Staging"])
            #expect(fromVariable.environment == nil)  // left to the library, which reads $APP_ENVIRONMENT
            let emptyVariable = configuration.selectingEnvironment(
                options, for: .production, processEnvironment: ["APP_ENVIRONMENT": ""])
            #expect(emptyVariable.environment == "Release")
            options.environment = "Staging"
            let explicit = configuration.selectingEnvironment(
                options, for: .production, processEnvironment: ["APP_ENVIRONMENT": "Debug"])
            #expect(explicit.environment == "Staging")
        }
    }
#endif
