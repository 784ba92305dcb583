import Environments
import Foundation
import Testing

/// A value derived from a secret never appears in an error: not in a rejection by the
/// `LogLevel` check or an application's `validate`, a type mismatch, a decoding failure or a
/// pending restart. Errors say which key and why instead.
@Suite struct SecretErrorTests {
    private let password = "Tr0ub4dor&3-horse"
    private let credential = "cred-xyzzy-42-plugh"

    /// A directory with a main file whose `Debug` section is `debug`, a `Secrets` list and a
    /// credential, read with `validate`.
    private func load(
        _ debug: [String: Any], secrets: [String] = ["Database.Password"],
        restartRequired: Set<String> = [],
        validate: (@Sendable (EnvironmentSnapshot) throws -> Void)? = nil,
        _ body: (TemporaryDirectory, () throws -> Environment) throws -> Void
    ) throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.writeCredentials(["db": credential + "\n"])
            try directory.writeXML([
                "Secrets": secrets,
                "Common": ["Database": ["Host": "db.example.com", "Password": password], "LogLevel": "info"],
                "Debug": debug,
            ])
            let options = directory.options(
                processEnvironment: credentials, restartRequiredKeys: restartRequired,
                validate: validate)
            try body(directory) { try Environment(options: options) }
        }
    }

    /// The error `body` throws, as every output shows it.
    private func rejection(_ body: () throws -> Void) throws -> EnvironmentError {
        do {
            try body()
        } catch let error as EnvironmentError {
            return error
        }
        Issue.record("no error")
        throw CancellationError()
    }

    private func expectNoSecret(_ error: EnvironmentError, sourceLocation: SourceLocation = #_sourceLocation) {
        for text in [error.description, error.message, error.hint ?? "", "\(error)", String(reflecting: error)] {
            #expect(!text.contains(password), "\(text)", sourceLocation: sourceLocation)
            #expect(!text.contains(credential), "\(text)", sourceLocation: sourceLocation)
            // Not even a part of it.
            #expect(!text.contains("horse") && !text.contains("xyzzy"), "\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test(
        "a LogLevel interpolated from a secret key, a credential or a mix is rejected by key, without the value",
        arguments: ["${Database.Password}", "${credential:db}", "x-${Database.Password}-y", "${Middle}"])
    func logLevelFromASecret(_ logLevel: String) throws {
        try load(["LogLevel": logLevel, "Middle": "level ${credential:db}"]) { _, make in
            let error = try rejection { _ = try make() }
            #expect(error.code == .validationFailed)
            #expect(error.key == "LogLevel")
            #expect(error.description.contains("'LogLevel' is <redacted>, expected one of trace"))
            expectNoSecret(error)
        }
    }

    @Test("a LogLevel that is not secret is still quoted, so the operator sees the typo")
    func logLevelThatIsNotSecret() throws {
        try load(["LogLevel": "verbose"]) { _, make in
            let error = try rejection { _ = try make() }
            #expect(error.description.contains("'LogLevel' is 'verbose', expected one of"))
        }
    }

    @Test("EnvironmentError.rejected shows a secret value as <redacted>, any other as it is, and names key and file")
    func rejectedHelper() throws {
        try load(["Port": 70000, "Token": "${credential:db}"]) { directory, make in
            let snapshot = try make().snapshot
            let secret = EnvironmentError.rejected(key: "Database.Password", in: snapshot, reason: "too short")
            #expect(secret.code == .validationFailed)
            #expect(secret.key == "Database.Password")
            #expect(secret.file == directory.mainFile)
            #expect(secret.environment == "Debug")
            #expect(secret.message == "'Database.Password' is <redacted>: too short")
            expectNoSecret(secret)
            let fromCredential = EnvironmentError.rejected(key: "Token", in: snapshot, reason: "bad")
            #expect(fromCredential.message == "'Token' is <redacted>: bad")
            // A dictionary holding a secret is secret as a whole.
            let dictionary = EnvironmentError.rejected(key: "Database", in: snapshot, reason: "bad")
            #expect(dictionary.message == "'Database' is <redacted>: bad")
            expectNoSecret(dictionary)
            let plain = EnvironmentError.rejected(
                key: "Port", in: snapshot, reason: "must be between 1 and 65535", hint: "Pick another port")
            #expect(
                plain.description
                    == "\(directory.mainFile): 'Port' is 70000: must be between 1 and 65535 (environment 'Debug'). Pick another port"
            )
            let missing = EnvironmentError.rejected(key: "Nothing", in: snapshot, reason: "is required")
            #expect(missing.message == "'Nothing' has no value: is required")
            #expect(missing.file == nil)
            // Through a scoped view: the full key path.
            let scoped = EnvironmentError.rejected(key: "Password", in: snapshot.scoped("Database"), reason: "weak")
            #expect(scoped.message == "'Database.Password' is <redacted>: weak")
            #expect(scoped.key == "Database.Password")
            #expect(snapshot.configuredValue(forKey: "Database.Password")?.displayValue() == "<redacted>")
            #expect(snapshot.configuredValue(forKey: "Database.Host")?.displayValue() == "db.example.com")
            #expect(snapshot.configuredValue(forKey: "Nothing")?.displayValue() == nil)
        }
    }

    @Test("validate's own errors quoting a secret value are redacted, whatever their type")
    func applicationErrorsAreScrubbed() throws {
        struct Quoting: Error, CustomStringConvertible {
            let text: String
            var description: String { "bad password \(text)!" }
        }
        let password = self.password
        let credential = self.credential
        let throwers: [@Sendable (EnvironmentSnapshot) throws -> Void] = [
            { snapshot in throw Quoting(text: (try? snapshot.require("Database.Password", as: String.self)) ?? "") },
            { snapshot in throw Quoting(text: (try? snapshot.require("Token", as: String.self)) ?? "") },
            { snapshot in
                throw EnvironmentError(
                    .validationFailed, "Database.Password '\(password)' is weak", key: "Database.Password",
                    hint: "do not use \(credential)")
            },
            { _ in throw NSError(domain: "app", code: 1, userInfo: [NSLocalizedDescriptionKey: "saw \(password)"]) },
        ]
        for validate in throwers {
            try load(["Token": "${credential:db}"], validate: validate) { _, make in
                let error = try rejection { _ = try make() }
                #expect(error.code == .validationFailed)
                #expect(error.description.contains("<redacted>"), "\(error)")
                expectNoSecret(error)
            }
        }
    }

    @Test("a typed read of a secret value of the wrong type names the key and types, not the value")
    func typeMismatch() throws {
        try load(["Port": "${credential:db}"], secrets: ["Database.Password"]) { _, make in
            let environment = try make()
            for key in ["Database.Password", "Port", "Database"] {
                let error = try rejection { _ = try environment.require(key, as: Int.self) }
                #expect(error.code == .typeMismatch)
                expectNoSecret(error)
            }
            let plain = try rejection { _ = try environment.require("Database.Host", as: Int.self) }
            #expect(plain.description.contains("db.example.com"))
        }
    }

    @Test("decoding a secret value into an enum or a number fails without quoting it")
    func decoding() throws {
        enum Level: String, Decodable { case low, high }
        struct Settings: Decodable {
            let Host: String
            let Password: Level
        }
        struct Numbers: Decodable { let Password: Int }
        struct Custom: Decodable {
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                let text = try container.decode(String.self)
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a custom: \(text)")
            }
        }
        struct Holder: Decodable { let Password: Custom }
        struct ListHolder: Decodable { let Tokens: [Level] }
        try load(["Tokens": ["${credential:db}"]], secrets: ["Database.Password", "Tokens"]) { _, make in
            let environment = try make()
            var errors: [EnvironmentError] = []
            errors.append(try rejection { _ = try environment.decode(Settings.self, from: "Database") })
            errors.append(try rejection { _ = try environment.decode(Numbers.self, from: "Database") })
            errors.append(try rejection { _ = try environment.decode(Holder.self, from: "Database") })
            errors.append(try rejection { _ = try environment.decode(ListHolder.self) })
            errors.append(try rejection { _ = try environment.scoped("Database").decode(Settings.self) })
            for error in errors {
                #expect(error.code == .decodingFailed || error.code == .typeMismatch)
                expectNoSecret(error)
            }
            #expect(errors[0].description.contains("Database.Password"))
        }
    }

    @Test("a restart-only secret that changes is reported pending as <redacted>")
    func pendingRestart() throws {
        try load(["Token": "${credential:db}"], restartRequired: ["Token", "Database.Password"]) { directory, make in
            let environment = try make()
            try directory.write("credentials/db", text: "another-\(credential)")
            try directory.writeXML([
                "Secrets": ["Database.Password"],
                "Common": ["Database": ["Host": "db.example.com", "Password": "new-\(password)"], "LogLevel": "info"],
                "Debug": ["Token": "${credential:db}"],
            ])
            _ = try environment.reload()
            let pending = environment.snapshot.pendingRestart
            #expect(Set(pending.keys) == ["Token", "Database.Password"])
            for (key, value) in pending {
                #expect(value.displayValue() == "<redacted>", "\(key)")
                #expect(!"\(value)".contains(password) && !"\(value)".contains(credential))
            }
        }
    }

    @Test("interpolation errors in and around secrets name keys and references, never a secret value")
    func interpolationErrors() throws {
        for debug: [String: Any] in [
            ["Broken": "${Database.Password}${Missing}"],
            ["Broken": "${credential:db}${env:NOPE}"],
            ["Broken": "${credential:db}${Database}"],
            ["Broken": "${credential:nothere}"],
            ["Database": ["Password": "\(password)${"]],
        ] {
            try load(debug) { _, make in
                let error = try rejection { _ = try make() }
                expectNoSecret(error)
            }
        }
    }

    @Test("a secret written literally with '${' in it: the error withholds the reference, which is part of the secret")
    func literalSecretWithAReference() throws {
        for literal in ["ab${horse}cd", "ab${xyzzy:q}cd", "ab${ horse }cd"] {
            try load(["Database": ["Password": literal]]) { directory, make in
                let error = try rejection { _ = try make() }
                #expect(error.key == "Database.Password")
                #expect(error.file == directory.mainFile)
                #expect(error.description.contains("the secret value of 'Database.Password' has a '${...}'"))
                expectNoSecret(error)
            }
        }
        // Not secret: the reference is shown, to find the typo.
        try load(["Other": "ab${horse}cd"]) { _, make in
            let error = try rejection { _ = try make() }
            #expect(error.description.contains("'${horse}' in 'Other'"))
        }
    }

    @Test("an error's description escapes control characters, so it stays one line and cannot drive a terminal")
    func descriptionEscapesControlCharacters() {
        let error = EnvironmentError(
            .validationFailed, "'Evil\u{1B}[2J\u{7}Key' is bad\r\nFORGED line\0", key: "Evil\u{1B}[2J\u{7}Key",
            file: "/etc/app/\u{1B}]0;title\u{7}.plist", hint: "tab\there\u{202E}")
        let text = error.description
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.value == 0x202E })
        #expect(text.contains(#"'Evil\u{1B}[2J\u{7}Key' is bad\r\nFORGED line\0"#))
        #expect(text.contains(#"/etc/app/\u{1B}]0;title\u{7}.plist"#))
        #expect(text.contains(#"tab\there\u{202E}"#))
    }
}
