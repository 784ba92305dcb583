#if Vapor
    import Environments
    import EnvironmentsVapor
    import Foundation
    import Testing
    import Vapor

    @Suite("Vapor's .env files beside ours")
    struct DotEnvTests {
        @Test("An APP_ line of a .env file that Vapor loads is an override, when the options are made after it")
        func dotEnvLineIsAnOverride() async {
            // In a process of its own (an exit test): Vapor's DotEnvFile.load sets the variable in
            // the process's environment, and in the one test process that every suite shares, an
            // example daemon that another test starts meanwhile would inherit it (seen in CI: a
            // 100,000-key `envctl diff --running` found the daemon's extra DotEnvProbe).
            await #expect(processExitsWith: .success) {
                let directory = try ConfigurationDirectory()
                let dotEnv = directory.path + "/.env"
                try "APP_DotEnvProbe=from a .env file\n".write(toFile: dotEnv, atomically: true, encoding: .utf8)
                let app = try await Application.make(.testing)
                try await DotEnvFile.load(path: dotEnv, fileio: app.fileio, overwrite: false)
                #expect(Environment.get("APP_DotEnvProbe") == "from a .env file")  // Vapor's read

                let options = directory.integration.selectingEnvironment(directory.options, for: app.environment)
                let environment = try Environments.Environment(options: options)
                #expect(environment.get("DotEnvProbe", default: "") == "from a .env file")
                // Shown with its source, as the unit's Environment= line would be.
                #expect(
                    environment.configuredValue(forKey: "DotEnvProbe")?.source.description == "$APP_DotEnvProbe")
                try await app.asyncShutdown()
            }
        }
    }
#endif
