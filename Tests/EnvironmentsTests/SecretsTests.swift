import Environments
import Foundation
import Testing

/// Secret values: `Secrets` arrays, credentials and values that interpolate a secret.
@Suite struct SecretsTests {
    private let password = "hunter2-very-secret"

    @Test func keysListedInSecretsAreSecret() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Secrets": ["Database.Password", "APIKey"],
                "Common": ["APIKey": "key-123", "Database": ["Host": "db", "Password": password]],
                "Debug": ["Other": "visible"],
            ])
            let environment = try Environment(options: directory.options())
            let secret = try #require(environment.configuredValue(forKey: "Database.Password"))
            #expect(secret.isSecret)
            #expect(secret.displayValue() == "<redacted>")
            #expect(secret.displayValue() == ConfiguredValue.redacted)
            #expect(secret.displayValue(revealSecrets: true) == password)
            // Reads still return the value.
            #expect((try? environment.require("Database.Password", as: String.self)) == password)
            #expect(environment.configuredValue(forKey: "APIKey")?.isSecret == true)
            #expect(environment.configuredValue(forKey: "Database.Host")?.isSecret == false)
            #expect(environment.configuredValue(forKey: "Database.Host")?.displayValue() == "db")
            #expect(environment.configuredValue(forKey: "Other")?.isSecret == false)
            // A dictionary holding a secret is secret as a whole.
            #expect(environment.configuredValue(forKey: "Database")?.isSecret == true)
            #expect(environment.configuredValue(forKey: "Database")?.displayValue() == "<redacted>")
            #expect(environment.snapshot.secretKeys == ["Database.Password", "APIKey"])
            #expect(environment.fetch("Secrets") == nil)
        }
    }

    @Test func aSecretDictionaryMakesEverythingBelowSecret() throws {
        let environment = try Environment(
            values: ["Vault": ["Token": "t", "Nested": ["Key": "k"]], "Plain": "p"], secretKeys: ["Vault"])
        #expect(environment.configuredValue(forKey: "Vault.Token")?.isSecret == true)
        #expect(environment.configuredValue(forKey: "Vault.Nested.Key")?.isSecret == true)
        #expect(environment.configuredValue(forKey: "Plain")?.isSecret == false)
    }

    @Test func secretsInADropIn() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Token": "abc", "Name": "n"]])
            try directory.writeXML(["Secrets": ["Token"]], to: "Environments.plist.d/50-secrets.plist")
            let environment = try Environment(options: directory.options())
            #expect(environment.configuredValue(forKey: "Token")?.isSecret == true)
            #expect(environment.configuredValue(forKey: "Name")?.isSecret == false)
        }
    }

    @Test func secretKeysFromOptions() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Token": "abc", "Name": "n"]])
            let environment = try Environment(options: directory.options(secretKeys: ["Token"]))
            #expect(environment.configuredValue(forKey: "Token")?.isSecret == true)
            #expect(environment.configuredValue(forKey: "Name")?.isSecret == false)
        }
    }

    @Test func credentialsAndValuesUsingThemAreSecret() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.writeCredentials(["db": password + "\n"])
            try directory.writeXML([
                "Secrets": ["APIKey"],
                "Debug": [
                    "Password": "${credential:db}",
                    "DSN": "postgres://app:${Password}@db/app",
                    "Header": "Key ${APIKey}",
                    "APIKey": "key-123",
                    "Host": "db",
                    "Plain": "postgres://${Host}/app",
                ],
            ])
            let environment = try Environment(options: directory.options(processEnvironment: credentials))
            #expect((try? environment.require("DSN", as: String.self)) == "postgres://app:\(password)@db/app")
            for key in ["Password", "DSN", "Header", "APIKey"] {
                #expect(environment.configuredValue(forKey: key)?.isSecret == true, "\(key)")
                #expect(environment.configuredValue(forKey: key)?.displayValue() == "<redacted>", "\(key)")
            }
            #expect(environment.configuredValue(forKey: "Plain")?.isSecret == false)
            #expect(environment.configuredValue(forKey: "Host")?.isSecret == false)
            #expect(
                environment.configuredValue(forKey: "DSN")?.displayValue(revealSecrets: true)
                    == "postgres://app:\(password)@db/app")
        }
    }

    @Test func secretnessPropagatesThroughChainsInAnyOrder() throws {
        for _ in 0..<5 {
            let environment = try Environment(
                values: ["S": "secret", "A": "${B}", "B": "${C}", "C": "[${S}]", "N": "${X}", "X": "x"],
                secretKeys: ["S"])
            for key in ["S", "A", "B", "C"] {
                #expect(environment.configuredValue(forKey: key)?.isSecret == true, "\(key)")
            }
            #expect(environment.configuredValue(forKey: "N")?.isSecret == false)
            #expect((try? environment.require("A", as: String.self)) == "[secret]")
        }
    }

    @Test func descriptionsDoNotContainSecrets() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Secrets": ["Password"],
                "Debug": ["Password": password, "Name": "n"],
            ])
            let environment = try Environment(options: directory.options())
            let snapshot = environment.snapshot
            #expect(!snapshot.description.contains(password))
            #expect(!"\(snapshot)".contains(password))
            let configured = try #require(environment.configuredValue(forKey: "Password"))
            #expect(!"\(configured)".contains(password))
            #expect(!String(reflecting: configured).contains(password))
            #expect("\(configured)".contains("<redacted>"))
            #expect(!snapshot.pendingRestart.description.contains(password))
        }
    }

    @Test func typeMismatchOnASecretDoesNotShowIt() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Secrets": ["Password"], "Debug": ["Password": password]])
            let environment = try Environment(options: directory.options())
            let thrown = try #require(throws: EnvironmentError.self) {
                try environment.require("Password", as: Int.self)
            }
            #expect(thrown.code == .typeMismatch)
            #expect(thrown.key == "Password")
            #expect(!thrown.description.contains(password))
            #expect(!thrown.message.contains(password))
            #expect(!(thrown.hint ?? "").contains(password))
            #expect(thrown.description.contains("'Password' is a string"))
            #expect(thrown.description.contains("expected integer"))
        }
    }

    @Test func decodingASecretDoesNotShowIt() throws {
        struct Credentials: Decodable { var Password: Int }
        let environment = try Environment(values: ["Login.Password": .string(password)], secretKeys: ["Login.Password"])
        let error = #expect(throws: EnvironmentError.self) {
            try environment.decode(Credentials.self, from: "Login")
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.description.contains(password) == false)
    }

    @Test func changingASecretNamesTheKeyOnly() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Secrets": ["Password"], "Debug": ["Password": "old-\(password)"]])
            let environment = try Environment(options: directory.options())
            try directory.writeXML(["Secrets": ["Password"], "Debug": ["Password": "new-\(password)"]])
            let outcome = try environment.reload()
            guard case .applied(let change) = outcome else {
                Issue.record("expected .applied")
                return
            }
            #expect(change.changedKeys == ["Password"])
            #expect(!change.current.description.contains(password))
        }
    }

    @Test func inMemoryOverrideOfASecretStaysSecret() throws {
        let environment = try Environment(values: ["Token": "a", "Name": "n"], secretKeys: ["Token"])
        try environment.setOverride(.string("b-\(password)"), forKey: "Token")
        #expect((try? environment.require("Token", as: String.self)) == "b-\(password)")
        #expect(environment.configuredValue(forKey: "Token")?.isSecret == true)
    }

    @Test func overrideOfASecretStaysSecret() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Secrets": ["Token"], "Debug": ["Token": "a"]])
            let environment = try Environment(options: directory.options())
            try environment.setOverride(.string(password), forKey: "Token")
            #expect(environment.configuredValue(forKey: "Token")?.isSecret == true)
            #expect(environment.configuredValue(forKey: "Token")?.source == .override)
        }
    }
}
