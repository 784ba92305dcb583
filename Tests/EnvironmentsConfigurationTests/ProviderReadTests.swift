#if SwiftConfiguration
    import Configuration
    import Environments
    import EnvironmentsConfiguration
    import Foundation
    import Testing

    @Suite("EnvironmentProvider: reading")
    struct ProviderReadTests {
        static var plist: [String: Any] {
            [
                "Common": [
                    "APIHost": "api.example.com",
                    "APIBaseUrl": "https://${APIHost}/v1",
                    "Port": "${env:PORT}",
                    "Verbose": "${env:VERBOSE}",
                    "Ratio": 2,
                    "Database": ["Host": "db.internal", "Port": 5432, "Password": "${credential:db-password}"],
                    "Token": "plain-secret",
                    "Hosts": ["a", "b"],
                    "Key": "${credential:tls-key}",
                    "Upstreams": ["api.example.com": ["Port": 443]],
                ] as [String: Any],
                "Production": ["APIHost": "api.production.example.com"],
                "Secrets": ["Token"],
            ]
        }

        /// An environment loaded from a real file, with `PORT=8080`, `VERBOSE=yes` and two credentials.
        static func environment(in directory: ConfigurationDirectory) throws -> Environment {
            try directory.write(plist)
            try directory.write(Data("hunter2\n".utf8), to: "credentials/db-password")
            try directory.write(Data(Data("key bytes".utf8).base64EncodedString().utf8), to: "credentials/tls-key")
            return try Environment(
                options: directory.options(processEnvironment: [
                    "PORT": "8080", "VERBOSE": "yes", "CREDENTIALS_DIRECTORY": directory.path("credentials"),
                ]))
        }

        @Test("every effective value reads through a ConfigReader; dotted keys and scoped readers reach dictionaries")
        func keys() async throws {
            try await withConfigurationDirectory { directory in
                let reader = ConfigReader(
                    provider: EnvironmentProvider(environment: try Self.environment(in: directory)))
                #expect(reader.string(forKey: "APIBaseUrl") == "https://api.production.example.com/v1")
                #expect(reader.string(forKey: "Database.Host") == "db.internal")
                #expect(reader.int(forKey: ["Database", "Port"]) == 5432)
                let database = reader.scoped(to: "Database")
                #expect(database.string(forKey: "Host") == "db.internal")
                #expect(database.int(forKey: "Port") == 5432)
                #expect(reader.string(forKey: "Missing") == nil)
                #expect(reader.string(forKey: "Database.Missing", default: "fallback") == "fallback")
                // A key's components are literal: a host name is one component.
                #expect(reader.int(forKey: ConfigKey(["Upstreams", "api.example.com", "Port"])) == 443)
                #expect(reader.scoped(to: ConfigKey(["Upstreams", "api.example.com"])).int(forKey: "Port") == 443)
                #expect(reader.int(forKey: "Upstreams.api.example.com.Port") == nil)
            }
        }

        @Test("conversions are those of the typed reads: interpolated strings read as numbers and booleans")
        func conversions() async throws {
            try await withConfigurationDirectory { directory in
                let reader = ConfigReader(
                    provider: EnvironmentProvider(environment: try Self.environment(in: directory)))
                #expect(reader.int(forKey: "Port") == 8080)
                #expect(reader.string(forKey: "Port") == "8080")
                #expect(reader.bool(forKey: "Verbose") == true)
                #expect(reader.double(forKey: "Ratio") == 2.0)
                #expect(reader.string(forKey: "Ratio") == "2")
                #expect(reader.stringArray(forKey: "Hosts") == ["a", "b"])
                #expect(reader.bytes(forKey: "Key") == Array("key bytes".utf8))
            }
        }

        @Test("a value of another type is an error naming the key, the file and the layer")
        func mismatch() async throws {
            try await withConfigurationDirectory { directory in
                let provider = EnvironmentProvider(environment: try Self.environment(in: directory))
                let error = try #require(throws: EnvironmentError.self) {
                    try provider.value(forKey: AbsoluteConfigKey(["Database", "Host"]), type: .int)
                }
                #expect(error.code == .typeMismatch)
                #expect(error.key == "Database.Host")
                #expect(error.file == directory.path("Environments.plist"))
                #expect(error.environment == "Production")
                #expect("\(error)".contains("'Database.Host' is a string (db.internal), expected integer"))
                #expect("\(error)".contains("[Common], layer common"))
                // The reader's own error wraps ours for required reads; defaults still apply.
                let reader = ConfigReader(provider: provider)
                #expect(throws: (any Error).self) { try reader.requiredInt(forKey: "Database.Host") }
                #expect(reader.int(forKey: "Database.Host", default: 7) == 7)
            }
        }

        @Test("a key that names a dictionary has no value, as with swift-configuration's file providers")
        func dictionaryKey() async throws {
            try await withConfigurationDirectory { directory in
                let provider = EnvironmentProvider(environment: try Self.environment(in: directory))
                for type in [ConfigType.string, .int, .stringArray, .bytes] {
                    let result = try provider.value(forKey: AbsoluteConfigKey(["Database"]), type: type)
                    #expect(result.value == nil)
                    #expect(result.encodedKey == "Database")
                }
            }
        }

        @Test("secret keys and credential values come back secret, and the reader redacts them")
        func secrets() async throws {
            try await withConfigurationDirectory { directory in
                let provider = EnvironmentProvider(environment: try Self.environment(in: directory))
                let password = try provider.value(forKey: AbsoluteConfigKey(["Database", "Password"]), type: .string)
                #expect(password.value == ConfigValue(.string("hunter2"), isSecret: true))
                let token = try provider.value(forKey: AbsoluteConfigKey(["Token"]), type: .string)
                #expect(token.value?.isSecret == true)
                let host = try provider.value(forKey: AbsoluteConfigKey(["Database", "Host"]), type: .string)
                #expect(host.value?.isSecret == false)
                #expect(try provider.value(forKey: AbsoluteConfigKey(["Key"]), type: .bytes).value?.isSecret == true)

                // A secret's text appears in no description swift-configuration makes, nor in our error.
                #expect(!"\(password.value!)".contains("hunter2"))
                let error = try #require(throws: EnvironmentError.self) {
                    try provider.value(forKey: AbsoluteConfigKey(["Database", "Password"]), type: .int)
                }
                #expect(!"\(error)".contains("hunter2"))
            }
        }

        @Test("snapshot() is one immutable generation of the environment")
        func snapshot() throws {
            let environment = try Environment(values: ["A": "1", "B": "1"])
            let provider = EnvironmentProvider(environment: environment, providerName: "app")
            let snapshot = try #require(provider.snapshot() as? EnvironmentProvider.Snapshot)
            let readerSnapshot = ConfigReader(provider: provider).snapshot()
            #expect(snapshot.providerName == "app")
            #expect(snapshot.environmentSnapshot === environment.snapshot)
            try environment.setOverride("2", forKey: "A")
            try environment.setOverride("2", forKey: "B")
            #expect(try snapshot.value(forKey: AbsoluteConfigKey(["A"]), type: .int).value?.content == .int(1))
            #expect(try snapshot.value(forKey: AbsoluteConfigKey(["B"]), type: .int).value?.content == .int(1))
            #expect(try provider.value(forKey: AbsoluteConfigKey(["A"]), type: .int).value?.content == .int(2))
            #expect(readerSnapshot.int(forKey: "A") == 1)
            #expect(readerSnapshot.int(forKey: "B") == 1)
            #expect("\(snapshot)" == "app[Test, generation 1, 2 values]")
            #expect("\(provider)" == "app[Test, generation 3, 2 values]")
        }
    }
#endif
